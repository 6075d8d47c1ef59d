// Everything the provisioner keeps on the host cluster for one virtual
// cluster, as Kubernetes objects in apply order (docs/ARCHITECTURE.md "Host
// objects" has the map). Pure and deterministic: the same inputs give the
// same objects, byte for byte once serialized (nlohmann::json keeps keys
// sorted), so applying them again changes nothing.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/status.h"
#include "gpu/inventory.h"
#include "tenancy/host/config.h"
#include "tenancy/reservation.h"
#include "tenancy/trust_tier.h"
#include "tenancy/virtual_cluster.h"

namespace septa::tenancy::host {

// Node labels and taints that pin a virtual cluster's pods to its reserved
// hardware (dedicated: labels; exclusive: labels and a taint that keeps
// everyone else off). Nodes are not the provisioner's objects: it patches
// these keys in and removes them on delete.
struct NodePatch {
  std::string node;
  std::map<std::string, std::string> labels;
  std::vector<gpu::Taint> taints;
  bool operator==(const NodePatch&) const = default;
};

// Exclusive nodes: label and NoSchedule taint with the tenant as value.
inline constexpr const char* kExclusiveTenantKey = "septa.dev/exclusive-tenant";
// Every node holding a dedicated or exclusive reservation: the label
// "vcluster.septa.dev/<host namespace>" = the tier ("dedicated" | "exclusive").
std::string ReservedNodeLabel(std::string_view host_namespace);

// A sleeping virtual cluster's ResourceQuota holds `pods` at this: the host's
// own admission then refuses every new pod in the namespace, so that once
// the provisioner has seen the quota in force (the host reports it in the
// quota's status.hard, which is what admission reads) and no pod left, none
// can start behind its back (a syncer still acting on an older view of the
// cluster included) before the reservation is released. Pods already
// running are not touched by a quota; sleep deletes them.
inline constexpr std::string_view kSleepingPods = "0";

struct HostObjects {
  std::string host_namespace;
  std::string field_manager;            // server-side apply's field manager
  std::vector<nlohmann::json> objects;  // apply in this order, delete in reverse
  std::vector<NodePatch> node_patches;  // by node name
};

// The host objects of `vcluster` of trust tier `tier` holding `reservation`,
// whose nodes `nodes` must contain (dedicated, exclusive and, with Kueue,
// isolated). The tenant is `vcluster.tenant`, the host namespace
// `vcluster.host_namespace` (stored, not derived). Errors: INVALID_ARGUMENT
// naming the field of a bad config, name or host namespace; FAILED_PRECONDITION when the
// reservation is another virtual cluster's or of another tier, or a node
// lacks its GPU product label where Kueue needs it; NOT_FOUND naming a
// reserved node missing from `nodes`.
Result<HostObjects> RenderHostObjects(const TrustTier& tier, const VirtualCluster& vcluster,
                                      const Reservation& reservation, const std::vector<gpu::InventoryNode>& nodes,
                                      const RenderConfig& config);

// The objects as one v1 List (what `kubectl apply -f` reads).
nlohmann::json ObjectList(const HostObjects& rendered);
// [{"node", "labels", "taints": [{"key", "value", "effect"}]}].
nlohmann::json NodePatchesJson(const std::vector<NodePatch>& patches);

}  // namespace septa::tenancy::host
