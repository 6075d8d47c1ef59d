// FGD's fragmentation measure (Weng et al., ATC 2023; PLACEMENT-BENCH.md):
// the GPU capacity of a node that the expected workload cannot use. The
// workload is learned from a trace: pods grouped into classes by (cpu,
// milli-GPU per GPU, GPU count, model constraint), the most popular classes
// covering 95 % of pods, with renormalised frequencies.
#pragma once

#include <cstdint>
#include <vector>

#include "gpu/cluster_state.h"

namespace septa::gpu {

struct WorkloadClass {
  std::int32_t cpu_milli = 0;
  std::int32_t mem_mib = 0;  // the most common memory request of the class; FGD ignores it
  std::int16_t num_gpu = 0;
  std::int16_t gpu_milli = 0;
  std::uint32_t model_mask = kAnyModel;
  double frequency = 0;  // p_m, summing to 1 over the kept classes
  std::int32_t pod_count = 0;

  // The free milli a GPU needs so that this class can use it.
  int PerGpuNeed() const { return num_gpu == 1 ? gpu_milli : kMilliPerGpu; }
};

struct WorkloadModel {
  std::vector<WorkloadClass> classes;  // most popular first
};

// Classes of `pods` covering at least `coverage` of them.
WorkloadModel LearnWorkload(const std::vector<PodShape>& pods, double coverage = 0.95);

// Whether class m fits the node by CPU, model and GPUs (memory ignored, as FGD does).
bool ClassFits(const NodeState& node, const WorkloadClass& m);

// F_n(m): all idle milli when m cannot use the node, else the idle milli of
// the GPUs with less free than m needs.
int ClassFragmentation(const NodeState& node, const WorkloadClass& m);

// F_n = sum_m p_m F_n(m), in milli-GPU.
double NodeFragmentation(const NodeState& node, const WorkloadModel& workload);

}  // namespace septa::gpu
