// The flat per-node state every placement policy scores: free CPU, memory and
// milli-GPU per GPU of each node, 28 bytes per node. Nodes are kept sorted by
// name, so "lowest index" is "lexicographically smallest name" (the tie rule of
// the paper's simulator, PLACEMENT-BENCH.md).
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>
#include <string>
#include <vector>

namespace septa::gpu {

inline constexpr int kMaxGpusPerNode = 8;
inline constexpr int kMilliPerGpu = 1000;
// Model masks hold one bit per model index of the cluster's model table.
inline constexpr std::uint32_t kAnyModel = ~0u;
inline constexpr int kMaxModels = 32;

struct NodeState {
  std::int32_t cpu_free = 0;                    // milli-cores
  std::int32_t mem_free = 0;                    // MiB
  std::int16_t gpu_free[kMaxGpusPerNode] = {};  // milli-GPU free per GPU
  std::uint8_t gpu_count = 0;
  std::uint8_t model = 0;  // index into the cluster's model names

  int IdleMilli() const {
    int sum = 0;
    for (int g = 0; g < gpu_count; ++g) sum += gpu_free[g];
    return sum;
  }
  int FullyFreeGpus() const {
    int n = 0;
    for (int g = 0; g < gpu_count; ++g) n += gpu_free[g] == kMilliPerGpu;
    return n;
  }
};

// What one pod asks of a node. `gpu_milli` is per GPU and below 1000 only when
// num_gpu == 1 (a fraction); `shape_id` is a dense id of the (cpu, memory,
// GPU request, models) tuple so policies can cache scores per shape.
struct PodShape {
  std::int32_t cpu_milli = 0;
  std::int32_t mem_mib = 0;
  std::int16_t num_gpu = 0;
  std::int16_t gpu_milli = 0;
  std::uint32_t model_mask = kAnyModel;
  std::int32_t shape_id = 0;

  bool fractional() const { return num_gpu == 1 && gpu_milli < kMilliPerGpu; }
  int RequestedMilli() const { return num_gpu * gpu_milli; }
};

// A decision: the node and which of its GPUs (bit g = GPU g). node < 0: no fit.
struct GpuPick {
  int node = -1;
  std::uint8_t gpu_mask = 0;
};

inline bool ModelAllowed(const NodeState& n, const PodShape& p) {
  return p.num_gpu == 0 || (p.model_mask >> n.model) & 1u;
}

inline bool GpusFit(const NodeState& n, const PodShape& p) {
  if (p.num_gpu == 0) return true;
  if (p.fractional()) {
    for (int g = 0; g < n.gpu_count; ++g) {
      if (n.gpu_free[g] >= p.gpu_milli) return true;
    }
    return false;
  }
  return n.FullyFreeGpus() >= p.num_gpu;
}

inline bool Fits(const NodeState& n, const PodShape& p) {
  return n.cpu_free >= p.cpu_milli && n.mem_free >= p.mem_mib && ModelAllowed(n, p) && GpusFit(n, p);
}

// The fractional GPU with the least free milli that still fits (lowest index on ties).
inline int TightestGpu(const NodeState& n, int milli) {
  int best = -1;
  for (int g = 0; g < n.gpu_count; ++g) {
    if (n.gpu_free[g] >= milli && (best < 0 || n.gpu_free[g] < n.gpu_free[best])) best = g;
  }
  return best;
}

// The first `count` completely free GPUs.
inline std::uint8_t FirstFreeGpus(const NodeState& n, int count) {
  std::uint8_t mask = 0;
  for (int g = 0; g < n.gpu_count && count > 0; ++g) {
    if (n.gpu_free[g] == kMilliPerGpu) {
      mask |= static_cast<std::uint8_t>(1u << g);
      --count;
    }
  }
  return mask;
}

// The simulator's default GPU choice: tightest fit for a fraction, first free otherwise.
inline std::uint8_t DefaultGpuChoice(const NodeState& n, const PodShape& p) {
  if (p.num_gpu == 0) return 0;
  if (p.fractional()) return static_cast<std::uint8_t>(1u << TightestGpu(n, p.gpu_milli));
  return FirstFreeGpus(n, p.num_gpu);
}

// sign = -1 takes the pod's resources, +1 gives them back.
inline void ApplyPod(NodeState& n, const PodShape& p, std::uint8_t gpu_mask, int sign) {
  n.cpu_free += sign * p.cpu_milli;
  n.mem_free += sign * p.mem_mib;
  for (int g = 0; g < n.gpu_count; ++g) {
    if ((gpu_mask >> g) & 1u) n.gpu_free[g] = static_cast<std::int16_t>(n.gpu_free[g] + sign * p.gpu_milli);
  }
}

// The nodes of a cluster in name order plus their capacities.
struct ClusterState {
  std::vector<std::string> names;
  std::vector<std::string> model_names;  // model index -> canonical name
  std::vector<NodeState> capacity;
  std::vector<NodeState> nodes;  // current free resources
  long long total_gpu_milli = 0;

  int ModelIndex(const std::string& model) const {
    auto it = std::find(model_names.begin(), model_names.end(), model);
    return it == model_names.end() ? -1 : static_cast<int>(it - model_names.begin());
  }
};

}  // namespace septa::gpu
