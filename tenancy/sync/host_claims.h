// A virtual cluster's PersistentVolumeClaims on the host (../shared/docs/
// SYNCER-FACTS.md "What a virtual cluster gets from the host": PVCs synced
// down). Each claim a synced pod uses has a host copy named HostObjectName,
// which the host's storage provisioners bind; its status (phase, capacity,
// access modes, conditions) is copied up. Unlike config maps, a claim's copy
// holds data: it lives as long as the virtual claim, never only while a pod
// uses it.
//
// What Septa refuses, where vCluster copies it: a claim that names a host
// PersistentVolume (spec.volumeName) or selects host volumes by label
// (spec.selector), which would let a tenant bind another tenant's released
// volume and read its data; and a data source that is not a claim of the
// same virtual namespace (a VolumeSnapshot or populator is not synced).
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include "common/status.h"
#include "tenancy/sync/pod_translation.h"

namespace septa::tenancy::sync {

inline constexpr std::string_view kClaimKind = "PersistentVolumeClaim";

// The host copy of `virtual_claim` of `vcluster`, or why it is not synced
// (the field and the rule). Copied: access modes, requested resources,
// storage class, volume mode, and a data source that is a claim (renamed to
// its host copy). The bookkeeping is every synced object's (HostMetadata).
using HostClaimResult = std::variant<nlohmann::json, Refusal>;
Result<HostClaimResult> HostClaim(const VirtualClusterView& vcluster, const nlohmann::json& virtual_claim);

// Whether `host_claim` as read from the host holds what `want` (a HostClaim)
// says: labels, annotations and the requested resources (a claim's spec is
// immutable but for growing its request).
bool ClaimUpToDate(const nlohmann::json& want, const nlohmann::json& host_claim);

// `want` as an update of `host_claim`: its metadata and requested resources
// over what the host holds (the rest of the spec is immutable, and the host
// fills in volumeName and the storage class).
nlohmann::json ClaimUpdate(const nlohmann::json& want, const nlohmann::json& host_claim);

// The virtual claim's status to write when the host's differs (phase,
// access modes, capacity, conditions, allocated resources); nullopt when
// they agree.
std::optional<nlohmann::json> ClaimStatusUp(const nlohmann::json& virtual_claim, const nlohmann::json& host_claim);

// Kubernetes' rule for ephemeral volumes, which the kubelet enforces: the
// claim "<pod>-<volume>" (EphemeralClaimName) must be the pod's own (a
// controller owner reference to the pod's UID). Pod "a" with volume "b-c"
// and pod "a-b" with volume "c" name one claim; the other pod's is refused,
// never mounted. `claim_named` gives the virtual claim of a name in the
// pod's namespace, nullopt when there is none yet (the pod waits for it).
std::optional<Refusal> EphemeralClaimOfAnother(
    const nlohmann::json& virtual_pod,
    const std::function<std::optional<nlohmann::json>(const std::string& name)>& claim_named);

}  // namespace septa::tenancy::sync
