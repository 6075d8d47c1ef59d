// What a virtual pod asks of its virtual cluster's GPUs, read and checked
// against what the tier allows: the tier-neutral `nvidia.com/gpu: N`, or
// exactly what the reservation holds (`nvidia.com/mig-<profile>` of a held
// profile on the isolated tier), plus the `septa.dev/` input annotations.
// Besides its GPUs a pod may ask only for what every node has (cpu, memory,
// ephemeral-storage, hugepages-<size>): another extended resource
// (amd.com/gpu, rdma/hca) or a dynamic resource claim is refused, naming
// the container and the resource.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <variant>
#include <vector>

#include "tenancy/sync/pod_translation.h"

namespace septa::tenancy::sync {

// One container's GPU resource.
struct ContainerGpuAsk {
  std::string list;  // "containers" | "initContainers"
  std::size_t index = 0;
  std::string resource;  // nvidia.com/gpu | nvidia.com/mig-<profile>
  std::int64_t count = 0;
  std::string field;  // spec.containers[0].resources.limits[nvidia.com/gpu]
};

struct GpuAsk {
  std::vector<ContainerGpuAsk> containers;  // empty: a CPU-only pod
  // Whole GPUs or MIG instances the pod holds at once, as the host's
  // scheduler counts them (common/pod_requests.h): containers and sidecars
  // add up, a plain init container counts with the sidecars before it.
  std::int64_t count = 0;
  std::string mig_profile;          // isolated: asked by resource or annotation; empty: the placement picks
  int milli_gpu = 0;                // shared: the fraction asked (or the default)
  std::int64_t gpu_memory_mib = 0;  // shared: asked in MiB instead of a fraction
  std::string field;                // where the ask was made, for refusals
  bool Empty() const { return containers.empty(); }
};

std::variant<GpuAsk, Refusal> ReadGpuAsk(const nlohmann::json& pod, const VirtualClusterView& vcluster,
                                         const SyncSettings& settings);

}  // namespace septa::tenancy::sync
