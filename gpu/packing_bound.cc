#include "gpu/packing_bound.h"

#include <algorithm>
#include <string>

#include "gpu/packing_lp.h"

namespace septa::gpu {

GpuContentsRecorder::GpuContentsRecorder(const ClusterState& cluster) {
  int gpus = 0;
  for (const NodeState& n : cluster.nodes) {
    first_gpu_.push_back(gpus);
    gpus += n.gpu_count;
  }
  contents_.resize(static_cast<std::size_t>(gpus));
}

void GpuContentsRecorder::Record(const PodShape& pod, const GpuPick& pick) {
  if (pick.node < 0) {
    if (pod.num_gpu == 1 && pod.gpu_milli == kMilliPerGpu) ++failed_whole_gpu_pods_;
    return;
  }
  if (!pod.fractional()) return;
  for (int g = 0; g < kMaxGpusPerNode; ++g) {
    if ((pick.gpu_mask >> g) & 1u)
      contents_[static_cast<std::size_t>(first_gpu_[pick.node] + g)].push_back(pod.gpu_milli);
  }
}

std::map<int, int> GpuContentsRecorder::FractionCounts() const {
  std::map<int, int> counts;
  for (const auto& gpu : contents_) {
    for (std::int16_t milli : gpu) ++counts[milli];
  }
  return counts;
}

int GpuContentsRecorder::FractionalGpus() const {
  return static_cast<int>(std::count_if(contents_.begin(), contents_.end(), [](const auto& g) { return !g.empty(); }));
}

Result<double> MinGpusForFractions(const std::map<int, int>& count_by_milli) {
  std::vector<PackingDemand> demand;
  for (const auto& [milli, count] : count_by_milli) {
    if (count < 0) return InvalidArgument("negative count for size " + std::to_string(milli));
    if (count > 0) demand.push_back(PackingDemand{milli, static_cast<double>(count), count});
  }
  Result<PackingLpSolution> lp = SolvePackingLp(demand);
  if (!lp.ok()) return lp.status();
  return lp->gpus;
}

double PackingBound::RecoverableGpus() const {
  return std::clamp(fractional_gpus - packed_gpus, 0.0, static_cast<double>(failed_whole_gpu_pods));
}

Result<PackingBound> ComputePackingBound(const GpuContentsRecorder& recorder) {
  Result<double> packed = MinGpusForFractions(recorder.FractionCounts());
  if (!packed.ok()) return packed.status();
  PackingBound bound;
  bound.fractional_gpus = recorder.FractionalGpus();
  bound.packed_gpus = *packed;
  bound.failed_whole_gpu_pods = recorder.failed_whole_gpu_pods();
  return bound;
}

}  // namespace septa::gpu
