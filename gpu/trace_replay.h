// Replays an openb trace by the method of the FGD paper's simulator
// (PLACEMENT-BENCH.md): the trace plus random clones up to 1.3x the cluster's
// GPU capacity, sorted by name then shuffled by seed, each pod placed once on
// arrival, nothing departs; allocation ratio and fragmentation sampled after
// every arrival. Decide() and Commit() are separate so the caller can time
// the decision alone.
#pragma once

#include <array>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "common/status.h"
#include "gpu/cluster_state.h"
#include "gpu/fragmentation.h"
#include "gpu/openb_csv.h"
#include "gpu/policy.h"

namespace septa::gpu {

// Everything the runs of one trace share.
struct ReplayInput {
  ClusterState cluster;        // GPU nodes only, in name order, all free
  std::vector<PodShape> pods;  // the trace, in file order
  std::vector<std::string> pod_names;
  WorkloadModel workload;  // learned from the trace (FGD's target workload)
};

// CPU-only nodes are left out, as in the paper. Shape ids are numbered by
// popularity (most common shape 0).
Result<ReplayInput> BuildReplayInput(const std::vector<OpenbNode>& nodes, const std::vector<OpenbPod>& pods);

// Indices into input.pods, clones included, in arrival order.
std::vector<int> ArrivalOrder(const ReplayInput& input, std::uint64_t seed, double target_ratio = 1.3);

inline constexpr std::array<int, 4> kFragSamplePoints = {30, 50, 70, 90};

struct ReplayMeasures {
  double alloc_ratio_100 = 0;  // % of cluster GPU milli allocated when arrived rounds to 100 % (NaN if never)
  double alloc_ratio_130 = 0;
  std::array<double, 4> frag_pct = {};  // at kFragSamplePoints % arrived, % of cluster GPUs
  int arrivals = 0;
  int failed_pods = 0;
  double final_alloc_ratio = 0;
};

class TraceReplay {
 public:
  TraceReplay(const ReplayInput& input, std::vector<int> arrivals, Policy& policy);

  bool done() const { return next_ >= arrivals_.size(); }
  const PodShape& next_pod() const { return input_.pods[arrivals_[next_]]; }
  // The policy's choice for the next pod; changes nothing.
  GpuPick Decide() { return policy_.Choose(cluster_, next_pod()); }
  // Applies the choice (node < 0: the pod failed) and samples the measures.
  void Commit(const GpuPick& pick);
  ReplayMeasures Measures() const;
  const ClusterState& cluster() const { return cluster_; }

 private:
  struct Mean {
    double sum = 0;
    int count = 0;
    void Add(double v) { sum += v, ++count; }
    // NaN when the run never reached the sample point (JSON writes null).
    double value() const { return count ? sum / count : std::numeric_limits<double>::quiet_NaN(); }
  };

  const ReplayInput& input_;
  std::vector<int> arrivals_;
  Policy& policy_;
  ClusterState cluster_;
  std::vector<double> node_frag_;
  double cluster_frag_ = 0;
  long long arrived_milli_ = 0;
  long long allocated_milli_ = 0;
  std::size_t next_ = 0;
  int failed_ = 0;
  Mean alloc_100_, alloc_130_;
  std::array<Mean, 4> frag_;
};

}  // namespace septa::gpu
