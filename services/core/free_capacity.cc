#include "services/core/free_capacity.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <utility>

namespace septa::core {

namespace {

bool HoldsMig(const HeldGpu& g) {
  return std::ranges::any_of(g.instances, [](const HeldMigInstance& i) { return i.holder.has_value(); });
}

bool GpuIsUntouched(const HeldGpu& g) { return !g.holder && g.shares.empty() && !HoldsMig(g); }

// The engine's tier rule (gpu/engine.cc): whole GPUs never share a node with
// fractions or MIG instances, whoever holds them.
bool NodeHoldsWholeGpus(const HeldNode& n) {
  return std::ranges::any_of(n.gpus, [](const HeldGpu& g) { return g.holder.has_value(); });
}
bool NodeHoldsSharesOrMig(const HeldNode& n) {
  return std::ranges::any_of(n.gpus, [](const HeldGpu& g) { return !g.shares.empty() || HoldsMig(g); });
}

std::vector<FreeCount> Counts(const std::map<std::pair<std::string, std::string>, int>& by_key) {
  std::vector<FreeCount> out;
  for (const auto& [key, count] : by_key) out.push_back({key.first, key.second, count});
  return out;
}

}  // namespace

FreeCapacity FreeCapacityOf(const std::vector<HeldNode>& nodes, gpu::Tier tier, const gpu::Catalog& catalog) {
  FreeCapacity free;
  free.tier = tier;
  std::map<std::pair<std::string, std::string>, int> counts;  // (model, profile)
  std::map<std::string, FreeShares> shares;                   // by model
  for (const HeldNode& n : nodes) {
    if (n.node.health != gpu::NodeHealth::kReady || n.holder || n.gpus.empty()) continue;
    switch (tier) {
      case gpu::Tier::kExclusive:
        if (std::ranges::all_of(n.gpus, GpuIsUntouched)) ++counts[{n.gpus.front().gpu.model, ""}];
        break;
      case gpu::Tier::kIsolated:
        if (!n.layout_settled || NodeHoldsWholeGpus(n)) break;
        for (const HeldGpu& g : n.gpus) {
          if (!g.gpu.mig_enabled || g.holder || !g.shares.empty()) continue;
          for (const HeldMigInstance& i : g.instances) {
            if (!i.holder && !i.profile.empty()) ++counts[{g.gpu.model, i.profile}];
          }
        }
        break;
      case gpu::Tier::kDedicated:
        if (NodeHoldsSharesOrMig(n)) break;
        for (const HeldGpu& g : n.gpus) {
          if (!g.gpu.mig_enabled && GpuIsUntouched(g)) ++counts[{g.gpu.model, ""}];
        }
        break;
      case gpu::Tier::kShared:
        if (NodeHoldsWholeGpus(n)) break;
        for (const HeldGpu& g : n.gpus) {
          if (g.gpu.mig_enabled || g.holder) continue;
          const int used = std::accumulate(g.shares.begin(), g.shares.end(), 0,
                                           [](int sum, const HeldShare& s) { return sum + s.milli_gpu; });
          const int room = gpu::kMilliPerGpu - used;
          if (room <= 0) continue;
          const gpu::GpuModel* model = catalog.Find(g.gpu.model);
          const std::int64_t memory_used =
              std::accumulate(g.shares.begin(), g.shares.end(), std::int64_t{0},
                              [](std::int64_t sum, const HeldShare& s) { return sum + s.gpu_memory_mib; });
          const std::int64_t memory_room = model ? std::max<std::int64_t>(0, model->memory_mib - memory_used) : 0;
          FreeShares& f = shares[g.gpu.model];
          f.model = g.gpu.model;
          ++f.gpus;
          f.milli_gpu += room;
          f.largest_milli_gpu = std::max(f.largest_milli_gpu, room);
          f.gpu_memory_mib += memory_room;
          f.largest_gpu_memory_mib = std::max(f.largest_gpu_memory_mib, memory_room);
        }
        break;
    }
  }
  switch (tier) {
    case gpu::Tier::kExclusive: free.nodes = Counts(counts); break;
    case gpu::Tier::kIsolated: free.mig = Counts(counts); break;
    case gpu::Tier::kDedicated: free.gpus = Counts(counts); break;
    case gpu::Tier::kShared:
      for (auto& [model, f] : shares) free.shared.push_back(f);
      break;
  }
  return free;
}

}  // namespace septa::core
