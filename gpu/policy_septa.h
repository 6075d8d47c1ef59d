// Septa's placement policy: fragmentation-aware like FGD, but measuring what
// the learned workload can really still run on a node, CPU included, and
// packing when fragmentation does not decide. See docs/placement.md.
//
// For a node n and workload class m (cpu c, k GPUs of need d each):
//   instances_n(m) = min(GPU slots for m, floor(cpu_free / c))
//   usable_n(m)    = instances_n(m) * k * d          (0 for a disallowed model)
//   waste_n        = idle_n - sum_m p_m usable_n(m)
// GPU slots count every instance a GPU can hold (two 470s fit one GPU), and the
// CPU term charges CPU-only pods for the GPUs they strand. A pod goes to the
// node (and GPU) whose waste grows least, measured in tenths of a GPU; among
// equals, to the node left with the least idle GPU (packing keeps whole GPUs
// and whole nodes free for the pods that need them); then the smallest name.
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
  // Expected stranded remainder of one GPU of `model` with `free` milli free
  // (the look-ahead tie-break), for tests and docs.
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
  // Growth of that expected remainder when `pod` takes `gpu_mask`, in tenths of a GPU.
  int LookaheadGrowth(const NodeState& node, const PodShape& pod, std::uint8_t gpu_mask) const;

  std::vector<Need> needs_;
  std::vector<Class> classes_;
  std::vector<int> slots_before_, slots_after_;  // reused: no allocation per decision
};

}  // namespace septa::gpu
