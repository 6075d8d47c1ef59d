// How far a finished placement run is from a perfect packing of the same
// fractional pods: the packing LP (gpu/packing_lp.h) over the fractional pods
// that ended up placed. It is a hindsight, offline bound — no online policy
// knows which pods will come — used by `septa-bench placement
// --packing-bound` to measure how much of a policy's lost capacity better
// packing could still recover (docs/placement.md).
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "common/status.h"
#include "gpu/cluster_state.h"

namespace septa::gpu {

// Which fractional pods (milli sizes) sit on each GPU, fed the decisions of a
// replay in order. Pods only arrive in the benchmark, so nothing is removed.
class GpuContentsRecorder {
 public:
  explicit GpuContentsRecorder(const ClusterState& cluster);
  // `pick.node < 0`: the pod failed (counted, places nothing).
  void Record(const PodShape& pod, const GpuPick& pick);

  // Count of placed fractional pods per milli size.
  std::map<int, int> FractionCounts() const;
  // GPUs that hold at least one fractional pod.
  int FractionalGpus() const;
  // Failed pods that asked for exactly one whole GPU: what a GPU freed by
  // better packing could have run.
  int failed_whole_gpu_pods() const { return failed_whole_gpu_pods_; }

 private:
  std::vector<int> first_gpu_;  // per node: index of its GPU 0 in contents_
  std::vector<std::vector<std::int16_t>> contents_;
  int failed_whole_gpu_pods_ = 0;
};

// The fewest GPUs (LP relaxation, so possibly fractional) that hold
// `count_by_milli` pods of each size (1..999 milli), no configuration using
// more pods of a size than there are.
Result<double> MinGpusForFractions(const std::map<int, int>& count_by_milli);

struct PackingBound {
  int fractional_gpus = 0;  // GPUs the run used for fractional pods
  double packed_gpus = 0;   // the LP's fewest GPUs for the same pods
  int failed_whole_gpu_pods = 0;
  // GPUs a perfect packing frees that a failed whole-GPU pod could then use.
  double RecoverableGpus() const;
};

Result<PackingBound> ComputePackingBound(const GpuContentsRecorder& recorder);

}  // namespace septa::gpu
