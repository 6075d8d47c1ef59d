// Septa's placement policy: fragmentation-aware like FGD, but valuing free
// GPU capacity at the prices of the best packing of the learned workload mix
// and counting the CPU and memory that GPU work needs. See docs/placement.md.
//
// Priced remainder of a node (primary key). Per GPU model, the packing LP of
// the learned fractional classes (gpu/packing_lp.h) prices each pod size s at
// y_s GPUs; K(f) = max sum y_s n_s over pod counts fitting f milli (1 for a
// free GPU when whole-GPU classes exist) is what a GPU with f free is still
// worth. A node's fill is sum_g 1000 K(free_g), capped by what its free CPU
// and memory can feed at the mix's CPU and memory per milli-GPU;
// remainder_n = idle_n - that fill. A pod of size d placed in a gap f changes
// it by 1000 (K(f) - K(f - d)) - d >= 1000 y_d - d, least where d belongs to
// the most valuable set of pods the gap can still take.
//
// Waste (second key), for class m (cpu c, k GPUs of need d each):
//   instances_n(m) = min(GPU slots for m, floor(cpu_free / c))
//   waste_n        = idle_n - sum_m p_m instances_n(m) k d   (0 instances for a disallowed model)
//
// A pod goes to the node (and GPU) whose priced remainder grows least (in
// hundredths of a GPU), then whose waste grows least (in tenths); then to the node left
// with the least idle GPU (packing keeps whole GPUs and whole nodes free for
// the pods that need them); then the smallest name.
#pragma once

#include <cstdint>
#include <vector>

#include "common/status.h"
#include "gpu/policy.h"

namespace septa::gpu {

class SeptaPolicy : public ScoringPolicy {
 public:
  SeptaPolicy(const ClusterState& cluster, const WorkloadModel& workload);
  std::string_view name() const override { return "septa"; }
  std::size_t StateBytes() const override;

  // waste_n in milli-GPU, for tests and docs.
  double Waste(const NodeState& node);
  // The node's priced remainder in milli-GPU: idle GPU minus what it is
  // worth at the packing LP's prices, capped by the CPU and memory the fill
  // needs. For tests and docs.
  double Remainder(const NodeState& node) const;
  // f - 1000 K(f) for one GPU of `model` with `free` milli free, for tests and docs.
  double GpuRemainder(int model, int free) const {
    return priced_remainder_[static_cast<std::size_t>(model) * (kMilliPerGpu + 1) + free];
  }
  // Not OK only if the packing LP failed (then every pod is priced at what it
  // asks).
  const Status& lp_status() const { return lp_status_; }

 protected:
  NodeScore ScoreNode(const ClusterState& cluster, int node, const PodShape& pod) override;

 private:
  // Priced-remainder changes are compared in hundredths of a GPU (finer
  // makes no measurable difference), waste changes in tenths: below that they
  // are treated as equal. A score is priced << 20 | waste << 10 | packing, so
  // the priced change is clamped to +-kPricedLimit hundredths (10 GPUs).
  static constexpr double kPricedQuantumMilli = 10;
  static constexpr std::int32_t kPricedLimit = 1000;
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

  void PriceModel(int model);
  void CountSlots(const NodeState& node, std::vector<int>& slots) const;
  double WasteOf(const std::vector<int>& slots, int cpu_free, int idle, int model) const;
  // Slots after `pod` takes `gpu_mask` from the node: only those GPUs change.
  void SlotsAfter(const NodeState& node, const PodShape& pod, std::uint8_t gpu_mask);

  // f - 1000 K(f) per model (index model * 1001 + f).
  std::vector<float> priced_remainder_;
  Status lp_status_;
  // The mix's CPU request per milli-GPU it uses (frequency-weighted).
  double cpu_per_milli_ = 0, mem_per_milli_ = 0;
  double RemainderOf(int model, int gpu_count, const std::int16_t* gpu_free, int cpu_free, int mem_free) const;

  std::vector<Need> needs_;
  std::vector<Class> classes_;
  std::vector<int> slots_before_, slots_after_;  // reused: no allocation per decision
};

}  // namespace septa::gpu
