// Names of the host objects Septa keeps for a virtual cluster. Every name is
// a valid DNS-1123 label, stable (a pure function of its inputs) and unique
// per input; the provisioner, the syncer and the pods they write agree on
// them through these functions only.
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
// names, tenancy/names.h): "septa-<tenant>-x-<vcluster>" when that fits in
// 63 characters and contains "-x-" only once, so that the split back into
// tenant and virtual cluster is unique (tenant "a-x" with "b" and tenant "a"
// with "x-b" would both read "septa-a-x-x-b"). Otherwise its first 52
// characters (without a trailing '-'), '-' and 10 hex digits of the SHA-256
// of "<tenant>/<vcluster>", which no two pairs share ('/' is in no name).
// The "septa-" prefix keeps tenants out of the host's own namespaces
// ("kube-system", "default").
std::string HostNamespaceName(std::string_view tenant, std::string_view vcluster);

// The KAI parent queue of the virtual clusters of trust tier `tier` (a valid name).
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
