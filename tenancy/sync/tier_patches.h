// The tier patches (DESIGN.md §2, Septa's core): runtime class, GPU
// resources rewritten to what the reservation holds, in the form the
// host's GPU stack reads, the scheduler and queue, and the pin to the node
// (and GPU) the placement chose.
#pragma once

#include <nlohmann/json.hpp>

#include "tenancy/sync/gpu_request.h"
#include "tenancy/sync/pod_translation.h"

namespace septa::tenancy::sync {

// Applies the patches to `host_pod` (already named and rewritten).
void ApplyTierPatches(nlohmann::json& host_pod, const SyncSettings& settings, const VirtualClusterView& vcluster,
                      const GpuAsk& ask, const PodAssignment& assignment);

// The runtime class a pod gets: the tier's for a GPU pod; for a CPU pod only
// where the tier's class is its isolation boundary (dedicated, exclusive: a
// sandbox such as Kata), not on shared and isolated, whose class is the
// NVIDIA runtime a CPU pod does not need.
std::string RuntimeClassFor(const VirtualClusterView& vcluster, bool uses_gpu);

}  // namespace septa::tenancy::sync
