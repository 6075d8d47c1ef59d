#include "gpu/policy_fgd.h"

#include <cmath>

namespace septa::gpu {

std::int32_t FgdScore(double frag_before, double frag_after) {
  const double x = (frag_before - frag_after) / 1000;
  return static_cast<std::int32_t>(1.0 / (1.0 + std::exp(-x)) * 100);
}

FgdPolicy::FgdPolicy(int node_count, const WorkloadModel& workload) : ScoringPolicy(node_count), workload_(workload) {}

NodeScore FgdPolicy::ScoreNode(const ClusterState& cluster, int node, const PodShape& pod) {
  const NodeState& n = cluster.nodes[node];
  const double before = NodeFragmentation(n, workload_);
  if (!pod.fractional()) {
    const std::uint8_t mask = DefaultGpuChoice(n, pod);
    NodeState after = n;
    ApplyPod(after, pod, mask, -1);
    return NodeScore{FgdScore(before, NodeFragmentation(after, workload_)), mask};
  }
  NodeScore best{-1, 0};
  for (int g = 0; g < n.gpu_count; ++g) {
    if (n.gpu_free[g] < pod.gpu_milli) continue;
    NodeState after = n;
    ApplyPod(after, pod, static_cast<std::uint8_t>(1u << g), -1);
    const std::int32_t s = FgdScore(before, NodeFragmentation(after, workload_));
    if (s > best.score) best = NodeScore{s, static_cast<std::uint8_t>(1u << g)};
  }
  return best;
}

}  // namespace septa::gpu
