// Pod-level placement inside a reservation (DESIGN.md "Placement happens
// twice", step 2): the node, and the GPUs where the backend can be told the
// device, among what the virtual cluster holds and its other synced pods do
// not use. Best fit: the node (or GPU) that the pod leaves the least free
// on, so the larger holes stay for larger pods; ties by name, then index.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <variant>
#include <vector>

#include "tenancy/sync/gpu_request.h"
#include "tenancy/sync/node_share.h"
#include "tenancy/sync/pod_translation.h"

namespace septa::tenancy::sync {

// A CPU-only pod gets an empty assignment. Nodes the view reports not Ready
// are skipped; a releasing reservation places no GPU pod. A node is chosen
// only where the pod's `requests` fit in the reservation's share of the
// node's CPU and memory (node_share.h) beside its other pods there; where
// none has room, the refusal names the share.
std::variant<PodAssignment, Refusal> PlaceInReservation(const VirtualClusterView& vcluster, const GpuAsk& ask,
                                                        const PodResources& requests,
                                                        const std::vector<PodAssignment>& others);

// The value of kAssignmentAnnotation that AssignmentOf reads back.
std::string AssignmentText(const PodAssignment& assignment);

}  // namespace septa::tenancy::sync
