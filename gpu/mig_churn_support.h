// What the MIG churn policies (gpu/mig_churn_*.cc) share: layouts from shape
// counts, the exact-profile fit with a policy's scores, the workload's
// forecast and each GPU's position within its model.
#pragma once

#include <array>
#include <optional>
#include <utility>
#include <vector>

#include "gpu/mig_churn.h"

namespace septa::gpu {

// Profile counts -> a placed layout (creation order), empty if they do not fit.
MigLayout ChurnLayoutOfCounts(const GpuModel& model, const std::vector<int>& counts);

// Shape counts -> profile counts of `model` (shapes the model lacks are dropped).
std::vector<int> ChurnProfileCounts(const ChurnState& state, int model, const std::array<int, kMigShapeCount>& shapes);

// kube-scheduler's default scoring, reduced to MIG: least allocated node first.
double ChurnLeastAllocated(const ChurnState& state, int node);

// Expected busy instances per shape on `n_gpus` GPUs at full load, from the
// workload's compute-slice-time shares.
std::array<int, kMigShapeCount> ChurnForecast(const std::array<double, kMigShapeCount>& shares, double n_gpus,
                                              double inflate);

// Each GPU's position among the GPUs of its model, and that model's GPU count.
std::vector<std::pair<int, int>> ChurnModelPositions(const ChurnState& state);

// The best usable free instance of the pod's exact profile (single-GPU pods),
// or the best node with `gpus` usable free 7g instances (multi-GPU pods);
// `score(gpu)` / `node_score(node)`: higher is better, ties to the lower index.
template <typename GpuScore, typename NodeScore>
std::optional<ChurnDecision> ChurnExactFit(const ChurnState& state, const ChurnPod& pod, GpuScore score,
                                           NodeScore node_score) {
  const int models = static_cast<int>(state.cluster().models.size());
  int available = 0;
  for (int m = 0; m < models; ++m) {
    if (state.ModelAllowed(pod, m)) available += state.FreeUsable(m, state.ProfileOf(m, pod.shape));
  }
  if (available < pod.gpus) return std::nullopt;
  std::optional<ChurnDecision> best;
  double best_score = 0;
  if (pod.gpus == 1) {
    const auto& gpus = state.gpus();
    for (int g = 0; g < static_cast<int>(gpus.size()); ++g) {
      const int p = state.ProfileOf(gpus[g].model, pod.shape);
      if (p < 0 || !state.ModelAllowed(pod, gpus[g].model) || !state.Usable(g)) continue;
      for (int i = 0; i < static_cast<int>(gpus[g].instances.size()); ++i) {
        const ChurnInstance& inst = gpus[g].instances[i];
        if (inst.pod >= 0 || inst.profile != p) continue;
        const double s = score(g);
        if (!best || s > best_score) {
          best = ChurnDecision::At({ChurnSlot{g, i}});
          best_score = s;
        }
        break;
      }
    }
    return best;
  }
  const auto& nodes = state.nodes();
  for (int n = 0; n < static_cast<int>(nodes.size()); ++n) {
    const int p = state.ProfileOf(nodes[n].model, pod.shape);
    if (p < 0 || !state.ModelAllowed(pod, nodes[n].model)) continue;
    std::vector<ChurnSlot> slots;
    for (int g : nodes[n].gpus) {
      if (!state.Usable(g)) continue;
      const auto& insts = state.gpus()[g].instances;
      for (int i = 0; i < static_cast<int>(insts.size()); ++i) {
        if (insts[i].pod < 0 && insts[i].profile == p) {
          slots.push_back(ChurnSlot{g, i});
          break;
        }
      }
      if (static_cast<int>(slots.size()) == pod.gpus) break;
    }
    if (static_cast<int>(slots.size()) < pod.gpus) continue;
    const double s = node_score(n);
    if (!best || s > best_score) {
      best = ChurnDecision::At(slots);
      best_score = s;
    }
  }
  return best;
}

// --- per-instance (R-GI) helpers: fgd-mig (gpu/mig_churn_fgd.cc), grmu (gpu/mig_churn_grmu.cc) ---

// The free slices (not in `used_mask`) that no legal placement of `profile`
// on free slices covers; every free slice when `profile` is -1. R-GI: free
// instances count as free, they can be destroyed.
int ChurnUnusableSlices(const GpuModel& model, int profile, std::uint32_t used_mask);

// FGD's expected fragmentation (policy_fgd.h) on MIG slices: the sum over
// shapes of weight × ChurnUnusableSlices of the shape's profile.
double ChurnExpectedUnusable(const GpuModel& model, const std::array<double, kMigShapeCount>& weights,
                             std::uint32_t used_mask);

// R-GI: adds a free instance of `profile` at `start` (a legal start clear of
// used instances) to `instances`, destroying the free instances it overlaps;
// the others keep their order, the new one comes last. A free instance of
// `profile` at `start` is reused as it is. Returns the instance's index.
int ChurnAddInstance(const GpuModel& model, std::vector<ChurnInstance>& instances, int profile, int start);

// The instances as a layout (same order).
MigLayout ChurnLayoutOf(const std::vector<ChurnInstance>& instances);

// The decision binding a single-GPU pod to `instance` of `instances`, the
// GPU's instances after an R-GI change (a change only if they differ from
// the GPU's current ones).
ChurnDecision ChurnBindAfterChange(const ChurnState& state, int gpu, const std::vector<ChurnInstance>& instances,
                                   int instance);

// The shape counts of `model`'s maximal layouts, deduplicated (layouts with a
// `+me` instance left out: the same layout without it is covered by
// another): the patterns of the bounds' cutting-stock programs.
std::vector<std::array<int, kMigShapeCount>> ChurnMaximalPatterns(const GpuModel& model);

}  // namespace septa::gpu
