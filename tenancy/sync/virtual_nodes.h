// The nodes a virtual cluster shows its tenant (../shared/docs/SYNCER-FACTS.md
// "What a virtual cluster gets from the host"): one read-only Node per host
// node its pods are bound to, whose capacity is what the tenant holds there
// (its reserved GPUs, MIG instances or GPU shares), where vCluster's fake
// nodes show no GPU at all. Pure: the syncer writes what these return.
#pragma once

#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "gpu/inventory.h"
#include "tenancy/reservation.h"

namespace septa::tenancy::sync {

// On every virtual node the syncer writes ("true"): the syncer lists and
// deletes only these, never a node someone else created.
inline constexpr std::string_view kVirtualNodeLabel = "septa.dev/virtual-node";
// Shared tier: the thousandths of a GPU the reservation holds on the node,
// summed over its GPUs (capacity then counts the GPUs it has a share of).
inline constexpr std::string_view kGpuMilliAnnotation = "septa.dev/gpu-milli";

// Whether a virtual pod is bound to its spec.nodeName by a binding (the
// syncer's, once its host pod was scheduled), which adds PodScheduled=True
// as the API server does; not a node name the tenant wrote into a new pod,
// which the translation refuses.
bool BoundToNode(const nlohmann::json& virtual_pod);

// The nodes `virtual_pods` are bound to (BoundToNode), sorted.
std::set<std::string> NodesInUse(const std::vector<nlohmann::json>& virtual_pods);

// The virtual node for host node `name`, as the inventory last saw it
// (`node`; nullptr when it is not in the inventory): the host labels that
// describe the machine (hostname, architecture, OS, zone, instance type,
// GPU product), its cpu and memory, Ready as its health; and as GPU
// capacity what `reservation` holds on it, in the resources pods ask for
// (dedicated and exclusive nvidia.com/gpu, isolated
// nvidia.com/mig-<profile>, shared nvidia.com/gpu per GPU shared and
// kGpuMilliAnnotation). A node the reservation holds nothing on (a CPU
// pod's) shows no GPU.
nlohmann::json VirtualNode(const Reservation& reservation, std::string_view name, const gpu::InventoryNode* node);

// Whether `existing` (as read back, with the server's metadata) shows what
// `desired` does: labels, annotations, spec and status.
bool VirtualNodeUpToDate(const nlohmann::json& existing, const nlohmann::json& desired);

}  // namespace septa::tenancy::sync
