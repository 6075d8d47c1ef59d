#include "gpu/mig_churn_support.h"

#include <cmath>

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

MigLayout ChurnCurrentLayout(const ChurnState& state, int gpu) {
  MigLayout layout;
  for (const ChurnInstance& inst : state.gpus()[gpu].instances) layout.push_back(MigInstance{inst.profile, inst.start});
  return layout;
}

}  // namespace septa::gpu
