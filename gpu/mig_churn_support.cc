#include "gpu/mig_churn_support.h"

#include <cmath>
#include <set>

namespace septa::gpu {

// Profile counts -> a placed layout (creation order), empty if they do not fit.
MigLayout ChurnLayoutOfCounts(const GpuModel& model, const std::vector<int>& counts) {
  auto layout = PlaceCounts(model, counts);
  return layout.ok() ? std::move(layout).value() : MigLayout{};
}

// Shape counts -> profile counts of `model` (shapes the model lacks are dropped).
std::vector<int> ChurnProfileCounts(const ChurnState& state, int model, const std::array<int, kMigShapeCount>& shapes) {
  std::vector<int> counts(state.cluster().models[model]->mig_profiles.size(), 0);
  for (int s = 0; s < kMigShapeCount; ++s) {
    const int p = state.ProfileOf(model, s);
    if (p >= 0) counts[p] += shapes[s];
  }
  return counts;
}

// kube-scheduler's default scoring, reduced to MIG: least allocated node first.
double ChurnLeastAllocated(const ChurnState& state, int node) {
  return -static_cast<double>(state.nodes()[node].used_memory_slices);
}

// Expected busy instances per shape on `n_gpus` GPUs at full load, from the
// workload's compute-slice-time shares.
std::array<int, kMigShapeCount> ChurnForecast(const std::array<double, kMigShapeCount>& shares, double n_gpus,
                                              double inflate) {
  std::array<int, kMigShapeCount> out = {};
  for (int s = 0; s < kMigShapeCount; ++s) {
    out[s] = static_cast<int>(std::lround(inflate * n_gpus * 7.0 * shares[s] / kShapeCompute[s]));
  }
  return out;
}

// Each GPU's position among the GPUs of its model (for layouts assigned by share).
std::vector<std::pair<int, int>> ChurnModelPositions(const ChurnState& state) {
  std::vector<int> count(state.cluster().models.size(), 0);
  std::vector<std::pair<int, int>> pos;
  for (const ChurnGpu& g : state.gpus()) pos.emplace_back(count[g.model]++, 0);
  for (std::size_t i = 0; i < pos.size(); ++i) pos[i].second = count[state.gpus()[i].model];
  return pos;
}

// --- per-instance (R-GI) helpers: fgd-mig, grmu ---

int ChurnUnusableSlices(const GpuModel& model, int profile, std::uint32_t used_mask) {
  auto bits = [](std::uint32_t x) {
    int n = 0;
    for (; x != 0; x &= x - 1) ++n;
    return n;
  };
  const std::uint32_t all = (1u << model.memory_slices) - 1u;
  const std::uint32_t free = all & ~used_mask;
  if (profile < 0) return bits(free);
  const MigProfile& prof = model.mig_profiles[profile];
  std::uint32_t covered = 0;
  for (int start : prof.starts) {
    if (start + prof.memory_slices > model.memory_slices) continue;
    const std::uint32_t m = SliceMask(prof, start);
    if ((m & used_mask) == 0) covered |= m;
  }
  return bits(free & ~covered);
}

double ChurnExpectedUnusable(const GpuModel& model, const std::array<double, kMigShapeCount>& weights,
                             std::uint32_t used_mask) {
  double sum = 0;
  for (int s = 0; s < kMigShapeCount; ++s) {
    if (weights[s] != 0) sum += weights[s] * ChurnUnusableSlices(model, ShapeProfile(model, s), used_mask);
  }
  return sum;
}

int ChurnAddInstance(const GpuModel& model, std::vector<ChurnInstance>& instances, int profile, int start) {
  for (std::size_t i = 0; i < instances.size(); ++i) {
    if (instances[i].pod < 0 && instances[i].profile == profile && instances[i].start == start) {
      return static_cast<int>(i);
    }
  }
  const std::uint32_t mask = SliceMask(model.mig_profiles[profile], start);
  std::erase_if(instances, [&](const ChurnInstance& inst) {
    return inst.pod < 0 && (SliceMask(model.mig_profiles[inst.profile], inst.start) & mask) != 0;
  });
  instances.push_back(ChurnInstance{profile, start, -1, 0});
  return static_cast<int>(instances.size()) - 1;
}

MigLayout ChurnLayoutOf(const std::vector<ChurnInstance>& instances) {
  MigLayout layout;
  layout.reserve(instances.size());
  for (const ChurnInstance& inst : instances) layout.push_back(MigInstance{inst.profile, inst.start});
  return layout;
}

ChurnDecision ChurnBindAfterChange(const ChurnState& state, int gpu, const std::vector<ChurnInstance>& instances,
                                   int instance) {
  ChurnDecision d = ChurnDecision::At({ChurnSlot{gpu, instance}});
  MigLayout layout = ChurnLayoutOf(instances);
  if (layout != ChurnLayoutOf(state.gpus()[gpu].instances))
    d.relayouts.push_back(ChurnRelayout{gpu, std::move(layout), true});
  return d;
}

std::vector<std::array<int, kMigShapeCount>> ChurnMaximalPatterns(const GpuModel& model) {
  std::set<std::array<int, kMigShapeCount>> patterns;
  for (const MigLayout& layout : MaximalLayouts(model)) {
    std::array<int, kMigShapeCount> counts = {};
    bool plain = true;
    for (const MigInstance& inst : layout) {
      const int shape = ProfileShape(model.mig_profiles[inst.profile]);
      if (shape < 0) {
        plain = false;
        break;
      }
      ++counts[shape];
    }
    if (plain) patterns.insert(counts);
  }
  return {patterns.begin(), patterns.end()};
}

}  // namespace septa::gpu
