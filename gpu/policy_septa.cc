#include "gpu/policy_septa.h"

#include <limits>

namespace septa::gpu {

SeptaPolicy::SeptaPolicy(const ClusterState& cluster, const WorkloadModel& workload)
    : ScoringPolicy(static_cast<int>(cluster.nodes.size())), workload_(workload) {}

NodeScore SeptaPolicy::ScoreNode(const ClusterState& cluster, int node, const PodShape& pod) {
  const NodeState& n = cluster.nodes[node];
  const double before = NodeFragmentation(n, workload_);
  NodeScore best{std::numeric_limits<std::int32_t>::min(), 0};
  for (int g = 0; g < (pod.fractional() ? n.gpu_count : 1); ++g) {
    if (pod.fractional() && n.gpu_free[g] < pod.gpu_milli) continue;
    const std::uint8_t mask = pod.fractional() ? static_cast<std::uint8_t>(1u << g) : DefaultGpuChoice(n, pod);
    NodeState after = n;
    ApplyPod(after, pod, mask, -1);
    const double delta = NodeFragmentation(after, workload_) - before;
    const std::int32_t s = static_cast<std::int32_t>(-delta * 100);
    if (s > best.score) best = NodeScore{s, mask};
  }
  return best;
}

}  // namespace septa::gpu
