// Names of the host objects Septa keeps for a virtual cluster. Every name is
// a valid DNS-1123 label, stable (a pure function of its inputs) and unique
// per input; the provisioner, the syncer and the pods they write agree on
// them through these functions only, and on the host namespace through the
// one stored with the virtual cluster (HostNamespaceName gives it once).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace septa::tenancy::host {

// vCluster's safe_concat (SYNCER-FACTS.md "Host names"): the parts joined
// with '-'; past 63 characters, the first 52, '-' and the first 10 hex
// digits of the SHA-256 of the whole joined text, then ".-" becomes "-".
std::string SafeConcat(const std::vector<std::string_view>& parts);

// Lower-case hex SHA-256 of `data`.
std::string Sha256Hex(std::string_view data);

// The host namespace of virtual cluster `vcluster` of `tenant` (both valid
// names, tenancy/names.h), as a new virtual cluster gets it (stored with
// it: everything reads the stored name, so this function may change
// without moving an existing namespace). Injective by construction up to
// a collision of SHA-256 in 44 bits, and the store refuses a duplicate:
//  - plain: "septa-<tenant>-x-<vcluster>" when that fits in 63 characters
//    and holds "-x-" exactly once, so that it splits back into one pair
//    ("a-x" with "b" and "a" with "x-b" would both read "septa-a-x-x-b");
//  - hashed otherwise: the first 49 characters of that text (which hold
//    "septa-", the whole tenant and its "-x"), less trailing '-', then
//    "-x-" and 11 hex digits of the SHA-256 of "<tenant>/<vcluster>" ('/'
//    is in no name). It holds "-x-" at least twice (the tenant's and the
//    hash's, overlapping when the cut ended in "-x"), so it is never
//    another pair's plain name; two hashed names are equal only when their
//    digests are.
// Every host namespace, of this function or of the one before (whose
// hashed names kept the tenant's "-x-" too), holds "-x-"; the names of
// cluster-wide objects Septa shares between virtual clusters never do.
// The "septa-" prefix keeps tenants out of the host's own namespaces
// ("kube-system", "default").
std::string HostNamespaceName(std::string_view tenant, std::string_view vcluster);

// How often "-x-" occurs in `name`, overlapping occurrences counted
// ("-x-x-" holds two): the shape HostNamespaceName tells its forms apart by.
std::size_t SeparatorCount(std::string_view name);

// The KAI parent queue of the virtual clusters of trust tier `tier` (a valid
// name): "septa-tier-<tier>", or "septa-tierh-" and 32 hex digits of the
// tier's SHA-256 when that would hold "-x-". It shares its kind with the
// leaf queues, named after host namespaces, and never has their shape.
std::string KaiTierQueueName(std::string_view tier);

// The Kueue ResourceFlavor of the GPUs whose nvidia.com/gpu.product label is
// `product`: readable (lower case, other characters as '-') and unique (6 hex
// digits of the label's SHA-256: "PCIe" and "PCIE" are different labels).
std::string GpuFlavorName(std::string_view product);

// Fixed names inside the host namespace, and of cluster-wide shared objects.
inline constexpr std::string_view kResourceQuotaName = "septa-quota";
inline constexpr std::string_view kLimitRangeName = "septa-limits";
inline constexpr std::string_view kDefaultDenyPolicyName = "septa-default-deny";
inline constexpr std::string_view kAllowPolicyName = "septa-allow";
inline constexpr std::string_view kWorkloadServiceAccountName = "septa-workload";
inline constexpr std::string_view kSyncerRoleName = "septa-syncer";
inline constexpr std::string_view kLocalQueueName = "septa";
inline constexpr std::string_view kDefaultFlavorName = "septa-default";  // CPU and memory, any node

}  // namespace septa::tenancy::host
