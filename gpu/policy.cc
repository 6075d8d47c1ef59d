#include "gpu/policy.h"

#include <limits>

#include "gpu/policies_classic.h"
#include "gpu/policy_fgd.h"
#include "gpu/policy_septa.h"

namespace septa::gpu {

ScoringPolicy::ScoringPolicy(int node_count) : cache_(static_cast<std::size_t>(node_count) * kSlotsPerNode) {
  feasible_.reserve(node_count);
}

void ScoringPolicy::NodeChanged(int node) {
  CacheEntry* slots = &cache_[static_cast<std::size_t>(node) * kSlotsPerNode];
  for (int s = 0; s < kSlotsPerNode; ++s) slots[s].shape_plus_one = 0;
}

NodeScore ScoringPolicy::CachedScore(const ClusterState& cluster, int node, const PodShape& pod) {
  const int tag = pod.shape_id + 1;
  if (tag <= 0 || tag > std::numeric_limits<std::uint16_t>::max()) return ScoreNode(cluster, node, pod);
  CacheEntry& e = cache_[static_cast<std::size_t>(node) * kSlotsPerNode + pod.shape_id % kSlotsPerNode];
  if (e.shape_plus_one != tag) {
    const NodeScore s = ScoreNode(cluster, node, pod);
    e = CacheEntry{s.score, static_cast<std::uint16_t>(tag), s.gpu_mask};
  }
  return NodeScore{e.score, e.gpu_mask};
}

GpuPick ScoringPolicy::Choose(const ClusterState& cluster, const PodShape& pod) {
  const int n = static_cast<int>(cluster.nodes.size());
  GpuPick best;
  std::int32_t best_score = std::numeric_limits<std::int32_t>::min();
  if (!normalized()) {
    for (int i = 0; i < n; ++i) {
      if (!Fits(cluster.nodes[i], pod)) continue;
      const NodeScore s = CachedScore(cluster, i, pod);
      if (s.score > best_score) {
        best_score = s.score;
        best = GpuPick{i, s.gpu_mask};
      }
    }
    return best;
  }
  feasible_.clear();
  std::int32_t lo = std::numeric_limits<std::int32_t>::max(), hi = std::numeric_limits<std::int32_t>::min();
  for (int i = 0; i < n; ++i) {
    if (!Fits(cluster.nodes[i], pod)) continue;
    const std::int32_t s = CachedScore(cluster, i, pod).score;
    feasible_.emplace_back(i, s);
    lo = std::min(lo, s);
    hi = std::max(hi, s);
  }
  // kube-scheduler's min-max normalisation, integer arithmetic: distinct raw
  // scores can tie after it, and ties go to the smallest name.
  const std::int64_t range = static_cast<std::int64_t>(hi) - lo;
  for (const auto& [i, raw] : feasible_) {
    const std::int32_t s = range == 0 ? 0 : static_cast<std::int32_t>((raw - lo) * std::int64_t{100} / range);
    if (s > best_score) {
      best_score = s;
      best = GpuPick{i, CachedScore(cluster, i, pod).gpu_mask};
    }
  }
  return best;
}

const std::vector<std::string>& PolicyNames() {
  static const std::vector<std::string> names = {"random",        "bestfit", "gpupacking", "dotproduct",
                                                 "gpuclustering", "fgd",     "septa"};
  return names;
}

std::unique_ptr<Policy> MakePolicy(std::string_view name, const ClusterState& cluster, const WorkloadModel& workload,
                                   std::uint64_t seed) {
  const int n = static_cast<int>(cluster.nodes.size());
  if (name == "random") return std::make_unique<RandomPolicy>(n, seed);
  if (name == "bestfit") return std::make_unique<BestFitPolicy>(n);
  if (name == "gpupacking") return std::make_unique<GpuPackingPolicy>(n);
  if (name == "dotproduct") return std::make_unique<DotProductPolicy>(n);
  if (name == "gpuclustering") return std::make_unique<GpuClusteringPolicy>(n);
  if (name == "fgd") return std::make_unique<FgdPolicy>(n, workload);
  if (name == "septa") return std::make_unique<SeptaPolicy>(cluster, workload);
  return nullptr;
}

}  // namespace septa::gpu
