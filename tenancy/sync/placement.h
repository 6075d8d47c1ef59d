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
#include "tenancy/sync/pod_translation.h"

namespace septa::tenancy::sync {

// A CPU-only pod gets an empty assignment. Nodes the view reports not Ready
// are skipped.
std::variant<PodAssignment, Refusal> PlaceInReservation(const VirtualClusterView& vcluster, const GpuAsk& ask,
                                                        const std::vector<PodAssignment>& others);

// The value of kAssignmentAnnotation that AssignmentOf reads back.
std::string AssignmentText(const PodAssignment& assignment);

}  // namespace septa::tenancy::sync
