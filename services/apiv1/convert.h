// API v1 messages <-> core records, shared by the REST and gRPC transports
// so that the two surfaces cannot drift.
#pragma once

#include <string>

#include "common/status.h"
#include "septa/v1/inventory.pb.h"
#include "septa/v1/tenant.pb.h"
#include "septa/v1/token.pb.h"
#include "septa/v1/trust_tier.pb.h"
#include "services/core/inventory_service.h"
#include "services/core/model.h"
#include "services/core/tenant_service.h"
#include "services/core/token_service.h"

namespace septa::apiv1 {

v1::Tenant ToProto(const core::Tenant& tenant);
v1::TrustTier ToProto(const core::TrustTier& tier);
v1::ApiToken ToProto(const core::ApiToken& token);
v1::InventoryNode ToProto(const core::HeldNode& node);
v1::ListNodesResponse ToProto(const core::InventoryPage& page);

// The fields a client may set on create; output-only fields are ignored.
Result<core::Tenant> TenantDraftFromProto(const v1::Tenant& tenant);

// Mask paths: display_name, labels, trust_tier, state (or their lowerCamelCase
// JSON names, as protobuf's JSON mapping of FieldMask has them). The transport passes
// the request's update mask, or, when it has none, the fields the client sent.
Result<core::TenantUpdate> TenantUpdateFromProto(const v1::Tenant& tenant, const std::vector<std::string>& mask_paths);

core::TokenRequest TokenRequestFromProto(const v1::CreateTokenRequest& request);

}  // namespace septa::apiv1
