// API v1 messages <-> core records, shared by the REST and gRPC transports
// so that the two surfaces cannot drift.
#pragma once

#include <optional>
#include <string>

#include "common/status.h"
#include "septa/v1/inventory.pb.h"
#include "septa/v1/tenant.pb.h"
#include "septa/v1/token.pb.h"
#include "septa/v1/trust_tier.pb.h"
#include "septa/v1/vcluster.pb.h"
#include "services/core/credential_service.h"
#include "services/core/free_capacity.h"
#include "services/core/inventory_service.h"
#include "services/core/model.h"
#include "services/core/tenant_service.h"
#include "services/core/token_service.h"
#include "services/core/virtual_cluster_service.h"
#include "services/core/virtual_pods.h"

namespace septa::apiv1 {

// `quota_usage` (output only) when given.
v1::Tenant ToProto(const core::Tenant& tenant, const std::optional<tenancy::TenantUsage>& quota_usage = std::nullopt);
v1::TrustTier ToProto(const core::TrustTier& tier);
v1::ApiToken ToProto(const core::ApiToken& token);
v1::InventoryNode ToProto(const core::HeldNode& node);
v1::ListNodesResponse ToProto(const core::InventoryPage& page);
v1::FreeCapacity ToProto(const core::FreeCapacity& free);
v1::ListVirtualClusterPodsResponse ToProto(const core::VirtualPodPage& page);

// Unset members stay absent (unlimited).
v1::TenantQuota ToProto(const tenancy::TenantQuota& quota);
v1::TenantQuotaUsage ToProto(const tenancy::TenantUsage& usage);
v1::TenantQuotaStatus ToProto(const core::TenantQuotaView& view);

// The fields a client may set on create; output-only fields are ignored.
google::protobuf::Timestamp ToTimestamp(TimePoint t);
Result<core::Tenant> TenantDraftFromProto(const v1::Tenant& tenant);

// Mask paths: display_name, labels, trust_tier, state, quota, quota.<member> (or their lowerCamelCase
// JSON names, as protobuf's JSON mapping of FieldMask has them). The transport passes
// the request's update mask, or, when it has none, the fields the client sent.
Result<core::TenantUpdate> TenantUpdateFromProto(const v1::Tenant& tenant, const std::vector<std::string>& mask_paths);

// Absent members stay absent both ways (a tier's default, or unlimited).
v1::ApiLimits ToProto(const tenancy::ApiLimits& limits);
tenancy::ApiLimits FromProto(const v1::ApiLimits& limits);

// A virtual cluster with its reservation (output only), conditions, state,
// times and the etag of its version.
v1::VirtualCluster ToProto(const core::VirtualClusterView& view);
v1::VirtualCluster::State ToProto(tenancy::VirtualClusterState state);

// The fields a client may set (display_name, capacity, quota, queue,
// api_limits, and the name on create); output-only fields are ignored. The capacity kind that is
// set gives the tier asked for; none or several: INVALID_ARGUMENT naming
// "capacity" (when `require_capacity`, as on create; an update leaves an
// absent capacity as it is).
Result<tenancy::VirtualCluster> VirtualClusterFromProto(const v1::VirtualCluster& in, bool require_capacity);

// The paths of an update mask of `message` by .proto name (lowerCamelCase
// JSON names are accepted, as protobuf's JSON mapping of FieldMask has them;
// "quota.cpuMilli" becomes "quota.cpu_milli").
std::vector<std::string> MaskPaths(const google::protobuf::Descriptor& message, const std::vector<std::string>& sent);

// The fields a client may write; output-only ones are ignored. gpu_sharing
// must be set when `require_gpu_sharing` (on create); credential_ttl_max
// in whole seconds.
Result<core::TrustTier> TrustTierFromProto(const v1::TrustTier& tier, bool require_gpu_sharing);
// Without an update mask, the fields the client set (non-empty, or present).
std::vector<std::string> TrustTierFieldsSet(const v1::TrustTier& tier);

core::TokenRequest TokenRequestFromProto(const v1::CreateTokenRequest& request);

v1::Credential ToProto(const core::VclusterCredential& credential);
v1::IssueKubeconfigResponse ToProto(const core::IssuedKubeconfig& issued);
v1::ListCredentialsResponse ToProto(const core::CredentialPage& page);

}  // namespace septa::apiv1
