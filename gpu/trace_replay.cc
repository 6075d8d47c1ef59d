#include "gpu/trace_replay.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <random>
#include <tuple>

namespace septa::gpu {

Result<ReplayInput> BuildReplayInput(const std::vector<OpenbNode>& nodes, const std::vector<OpenbPod>& pods) {
  ReplayInput in;
  std::vector<const OpenbNode*> gpu_nodes;
  for (const OpenbNode& n : nodes) {
    if (n.gpu_count > 0) gpu_nodes.push_back(&n);
  }
  if (gpu_nodes.empty()) return InvalidArgument("the node list has no GPU node");
  std::sort(gpu_nodes.begin(), gpu_nodes.end(),
            [](const OpenbNode* a, const OpenbNode* b) { return a->name < b->name; });
  for (const OpenbNode* n : gpu_nodes) {
    if (in.cluster.ModelIndex(n->model) < 0) in.cluster.model_names.push_back(n->model);
  }
  if (in.cluster.model_names.size() > kMaxModels) return InvalidArgument("more than 32 GPU models in one cluster");
  for (const OpenbNode* n : gpu_nodes) {
    NodeState s;
    s.cpu_free = n->cpu_milli;
    s.mem_free = n->memory_mib;
    s.gpu_count = static_cast<std::uint8_t>(n->gpu_count);
    s.model = static_cast<std::uint8_t>(in.cluster.ModelIndex(n->model));
    for (int g = 0; g < n->gpu_count; ++g) s.gpu_free[g] = kMilliPerGpu;
    in.cluster.names.push_back(n->name);
    in.cluster.capacity.push_back(s);
    in.cluster.total_gpu_milli += n->gpu_count * kMilliPerGpu;
  }
  in.cluster.nodes = in.cluster.capacity;

  for (const OpenbPod& p : pods) {
    PodShape s;
    s.cpu_milli = p.cpu_milli;
    s.mem_mib = p.memory_mib;
    s.num_gpu = static_cast<std::int16_t>(p.num_gpu);
    s.gpu_milli = static_cast<std::int16_t>(p.gpu_milli);
    if (!p.gpu_spec.empty()) {
      s.model_mask = 0;
      for (const std::string& model : p.gpu_spec) {
        const int index = in.cluster.ModelIndex(model);
        if (index >= 0) s.model_mask |= 1u << index;
      }
    }
    in.pods.push_back(s);
    in.pod_names.push_back(p.name);
  }
  // Shape ids by popularity so the per-node score caches keep the common shapes.
  using Key = std::tuple<std::int32_t, std::int32_t, std::int16_t, std::int16_t, std::uint32_t>;
  std::map<Key, int> popularity;
  auto key = [](const PodShape& s) { return Key{s.cpu_milli, s.mem_mib, s.num_gpu, s.gpu_milli, s.model_mask}; };
  for (const PodShape& s : in.pods) ++popularity[key(s)];
  std::vector<std::pair<int, Key>> ranked;
  for (const auto& [k, count] : popularity) ranked.emplace_back(-count, k);
  std::sort(ranked.begin(), ranked.end());
  std::map<Key, int> ids;
  for (std::size_t i = 0; i < ranked.size(); ++i) ids[ranked[i].second] = static_cast<int>(i);
  for (PodShape& s : in.pods) s.shape_id = ids[key(s)];

  in.workload = LearnWorkload(in.pods);
  return in;
}

std::vector<int> ArrivalOrder(const ReplayInput& input, std::uint64_t seed, double target_ratio) {
  const int trace_size = static_cast<int>(input.pods.size());
  std::vector<int> order(trace_size);
  std::iota(order.begin(), order.end(), 0);
  std::vector<std::string> names = input.pod_names;
  long long requested = 0;
  for (const PodShape& p : input.pods) requested += p.RequestedMilli();
  const double limit = target_ratio * static_cast<double>(input.cluster.total_gpu_milli);
  std::mt19937_64 rng(seed);
  if (trace_size > 0) {
    std::uniform_int_distribution<int> draw(0, trace_size - 1);
    for (int clone = 0;; ++clone) {
      const int i = draw(rng);
      // The simulator's quirk: the check uses the drawn pod's per-GPU milli.
      if (static_cast<double>(requested + input.pods[i].gpu_milli) > limit) break;
      requested += input.pods[i].RequestedMilli();
      order.push_back(i);
      names.push_back(input.pod_names[i] + "-clone-" + std::to_string(clone));
    }
  }
  std::vector<int> by_name(order.size());
  std::iota(by_name.begin(), by_name.end(), 0);
  std::sort(by_name.begin(), by_name.end(), [&](int a, int b) { return names[a] < names[b]; });
  std::vector<int> arrivals;
  arrivals.reserve(order.size());
  for (int i : by_name) arrivals.push_back(order[i]);
  std::shuffle(arrivals.begin(), arrivals.end(), rng);
  return arrivals;
}

TraceReplay::TraceReplay(const ReplayInput& input, std::vector<int> arrivals, Policy& policy)
    : input_(input), arrivals_(std::move(arrivals)), policy_(policy), cluster_(input.cluster) {
  node_frag_.reserve(cluster_.nodes.size());
  for (const NodeState& n : cluster_.nodes) {
    node_frag_.push_back(NodeFragmentation(n, input_.workload));
    cluster_frag_ += node_frag_.back();
  }
}

void TraceReplay::Commit(const GpuPick& pick) {
  const PodShape& pod = next_pod();
  ++next_;
  arrived_milli_ += pod.RequestedMilli();
  if (pick.node < 0) {
    ++failed_;
  } else {
    NodeState& n = cluster_.nodes[pick.node];
    ApplyPod(n, pod, pick.gpu_mask, -1);
    allocated_milli_ += pod.RequestedMilli();
    policy_.NodeChanged(pick.node);
    const double frag = NodeFragmentation(n, input_.workload);
    cluster_frag_ += frag - node_frag_[pick.node];
    node_frag_[pick.node] = frag;
  }
  const double total = static_cast<double>(cluster_.total_gpu_milli);
  const long arrived_pct = std::lround(100.0 * static_cast<double>(arrived_milli_) / total);
  const double alloc_pct = 100.0 * static_cast<double>(allocated_milli_) / total;
  if (arrived_pct == 100) alloc_100_.Add(alloc_pct);
  if (arrived_pct == 130) alloc_130_.Add(alloc_pct);
  for (std::size_t i = 0; i < kFragSamplePoints.size(); ++i) {
    if (arrived_pct == kFragSamplePoints[i]) frag_[i].Add(100.0 * cluster_frag_ / total);
  }
}

ReplayMeasures TraceReplay::Measures() const {
  ReplayMeasures m;
  m.alloc_ratio_100 = alloc_100_.value();
  m.alloc_ratio_130 = alloc_130_.value();
  for (std::size_t i = 0; i < frag_.size(); ++i) m.frag_pct[i] = frag_[i].value();
  m.arrivals = static_cast<int>(arrivals_.size());
  m.failed_pods = failed_;
  m.final_alloc_ratio = 100.0 * static_cast<double>(allocated_milli_) / static_cast<double>(cluster_.total_gpu_milli);
  return m;
}

}  // namespace septa::gpu
