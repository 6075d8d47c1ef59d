#include "gpu/policies_classic.h"

namespace septa::gpu {
namespace {

bool HasPartialGpu(const NodeState& n) {
  for (int g = 0; g < n.gpu_count; ++g) {
    if (n.gpu_free[g] > 0 && n.gpu_free[g] < kMilliPerGpu) return true;
  }
  return false;
}

}  // namespace

RandomPolicy::RandomPolicy(int node_count, std::uint64_t seed) : rng_(seed) { feasible_.reserve(node_count); }

GpuPick RandomPolicy::Choose(const ClusterState& cluster, const PodShape& pod) {
  feasible_.clear();
  for (int i = 0; i < static_cast<int>(cluster.nodes.size()); ++i) {
    if (Fits(cluster.nodes[i], pod)) feasible_.push_back(i);
  }
  if (feasible_.empty()) return {};
  const int node = feasible_[std::uniform_int_distribution<std::size_t>(0, feasible_.size() - 1)(rng_)];
  return GpuPick{node, DefaultGpuChoice(cluster.nodes[node], pod)};
}

NodeScore BestFitPolicy::ScoreNode(const ClusterState& cluster, int node, const PodShape& pod) {
  const NodeState& n = cluster.nodes[node];
  const double cpu_left = n.cpu_free - pod.cpu_milli;
  const double gpu_left = n.IdleMilli() - pod.RequestedMilli();
  const double score = (1 - (0.5 * cpu_left / 128000 + 0.5 * gpu_left / 8000)) * 100;
  return NodeScore{static_cast<std::int32_t>(score), DefaultGpuChoice(n, pod)};
}

NodeScore GpuPackingPolicy::ScoreNode(const ClusterState& cluster, int node, const PodShape& pod) {
  const NodeState& n = cluster.nodes[node];
  const std::uint8_t mask = DefaultGpuChoice(n, pod);
  int tier = 0;
  if (pod.fractional() && n.gpu_free[std::countr_zero(mask)] < kMilliPerGpu) {
    tier = 2;
  } else if (n.IdleMilli() < n.gpu_count * kMilliPerGpu) {
    tier = 1;
  }
  const int idle_left = n.IdleMilli() - pod.RequestedMilli();
  return NodeScore{tier * 100000 - idle_left, mask};
}

NodeScore DotProductPolicy::ScoreNode(const ClusterState& cluster, int node, const PodShape& pod) {
  const NodeState& n = cluster.nodes[node];
  const NodeState& cap = cluster.capacity[node];
  const double cpu_cap = std::max(1, cap.cpu_free), mem_cap = std::max(1, cap.mem_free);
  const double gpu_cap = std::max(1, cap.IdleMilli());
  const double dot = pod.cpu_milli / cpu_cap * (n.cpu_free / cpu_cap) + pod.mem_mib / mem_cap * (n.mem_free / mem_cap) +
                     pod.RequestedMilli() / gpu_cap * (n.IdleMilli() / gpu_cap);
  return NodeScore{static_cast<std::int32_t>(dot * 1e6), DefaultGpuChoice(n, pod)};
}

NodeScore GpuClusteringPolicy::ScoreNode(const ClusterState& cluster, int node, const PodShape& pod) {
  const NodeState& n = cluster.nodes[node];
  const bool partial = HasPartialGpu(n);
  const bool idle = n.IdleMilli() == n.gpu_count * kMilliPerGpu;
  int score = 1;  // idle node, or a CPU-only pod
  if (pod.num_gpu > 0 && !idle) {
    const bool same_kind = pod.fractional() ? partial : !partial;
    score = same_kind ? 2 : 0;
  }
  return NodeScore{score, DefaultGpuChoice(n, pod)};
}

}  // namespace septa::gpu
