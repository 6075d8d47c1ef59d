// Septa's placement policy: fragmentation-aware like FGD, but looking ahead
// with the learned workload mix and counting the CPU and memory that GPU work
// needs. See docs/placement.md.
//
// Look-ahead remainder of a node (primary key). Per GPU model, from the
// learned classes m (frequency p_m, per-GPU need d_m):
//   V(f) = sum_{m: d_m <= f} p_m (d_m + V(f - d_m)) / sum_{m: d_m <= f} p_m
// is the milli that pods drawn from the mix are expected to fill on one GPU
// with f free if each pod that fits goes in. A node's expected fill is
// sum_g V(free_g), capped by what its free CPU and memory can feed at the mix's
// CPU and memory per milli-GPU; remainder_n = idle_n - that fill.
//
// Waste (second key), for class m (cpu c, k GPUs of need d each):
//   instances_n(m) = min(GPU slots for m, floor(cpu_free / c))
//   waste_n        = idle_n - sum_m p_m instances_n(m) k d   (0 instances for a disallowed model)
//
// A pod goes to the node (and GPU) whose remainder grows least, then whose
// waste grows least, both measured in tenths of a GPU; then to the node left
// with the least idle GPU (packing keeps whole GPUs and whole nodes free for
// the pods that need them); then the smallest name.
#pragma once

#include <cstdint>
#include <vector>

#include "gpu/policy.h"

namespace septa::gpu {

class SeptaPolicy : public ScoringPolicy {
 public:
  SeptaPolicy(const ClusterState& cluster, const WorkloadModel& workload);
  std::string_view name() const override { return "septa"; }
  std::size_t StateBytes() const override;

  // waste_n in milli-GPU, for tests and docs.
  double Waste(const NodeState& node);
  // The node's look-ahead remainder in milli-GPU: idle GPU minus what pods
  // drawn from the learned mix are expected to fill, the fill capped by the
  // CPU it needs. For tests and docs.
  double Remainder(const NodeState& node) const;
  // Expected stranded remainder of one GPU of `model` with `free` milli free, for tests and docs.
  double GpuLookaheadWaste(int model, int free) const {
    return gpu_waste_[static_cast<std::size_t>(model) * (kMilliPerGpu + 1) + free];
  }

 protected:
  NodeScore ScoreNode(const ClusterState& cluster, int node, const PodShape& pod) override;

 private:
  // Waste changes below this are treated as equal (a tenth of a GPU).
  static constexpr double kWasteQuantumMilli = 100;

  struct Class {
    int need = 0;  // index into needs_
    int num_gpu = 0;
    int cpu_milli = 0;
    int mem_mib = 0;
    std::uint32_t model_mask = kAnyModel;
    double milli_per_instance = 0;  // k * d
    double frequency = 0;
  };
  // Instances of per-GPU need d that a GPU with f milli free can hold: f / d.
  struct Need {
    int milli = 0;
    std::vector<std::uint8_t> slots_by_free;  // index: free milli 0..1000
  };

  void CountSlots(const NodeState& node, std::vector<int>& slots) const;
  double WasteOf(const std::vector<int>& slots, int cpu_free, int idle, int model) const;
  // Slots after `pod` takes `gpu_mask` from the node: only those GPUs change.
  void SlotsAfter(const NodeState& node, const PodShape& pod, std::uint8_t gpu_mask);

  // Expected stranded milli of one GPU with f free (index model * 1001 + f) if
  // pods keep arriving from the learned mix and every one that fits goes in.
  std::vector<float> gpu_waste_;
  // The mix's CPU request per milli-GPU it uses (frequency-weighted).
  double cpu_per_milli_ = 0, mem_per_milli_ = 0;
  double RemainderOf(int model, int gpu_count, const std::int16_t* gpu_free, int cpu_free, int mem_free) const;

  std::vector<Need> needs_;
  std::vector<Class> classes_;
  std::vector<int> slots_before_, slots_after_;  // reused: no allocation per decision
};

}  // namespace septa::gpu
