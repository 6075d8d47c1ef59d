// P5 of the MIG churn benchmark, FGD-MIG: Fragmentation Gradient Descent
// (Weng et al., ATC '23; gpu/policy_fgd.h) carried from GPU fractions to MIG
// slices, R-GI. It stands in for Zambianco et al. (arXiv 2511.18906), whose
// metric could not be read (MIG-BENCH §1); docs/placement.md lists what is
// ours.
#include <algorithm>
#include <cmath>
#include <tuple>

#include "gpu/mig_churn.h"
#include "gpu/mig_churn_support.h"

namespace septa::gpu {
namespace {

class FgdMigPolicy : public ChurnPolicy {
 public:
  FgdMigPolicy(const std::array<double, kMigShapeCount>& shares, double t_gi_s) : t_gi_s_(t_gi_s) {
    double total = 0;
    for (double s : shares) total += std::max(0.0, s);
    for (int s = 0; s < kMigShapeCount; ++s) {
      weights_[s] = total > 0 ? std::max(0.0, shares[s]) / total : 1.0 / static_cast<int>(kMigShapeCount);
    }
  }
  std::string name() const override { return "fgd-mig"; }
  // R-GI: created instances run pods after t_gi; no GPU or node is blocked.
  RelayoutCost Cost() const override { return {0, 0, t_gi_s_}; }

  // R-GI creation is per pod, not a plan: placements do not wait for
  // `may_relayout` (nor do HAMi templates' re-layouts of idle GPUs).
  std::optional<ChurnDecision> Place(const ChurnState& state, const ChurnPod& pod, bool /*may_relayout*/) override {
    Prepare(state);
    return pod.gpus > 1 ? PlaceWhole(state, pod) : PlaceOne(state, pod);
  }

 private:
  struct FgdPlacement {
    int start = 0;
    std::uint32_t mask = 0;
  };
  // Per model: the expected unusable slices of every used-slice mask, and
  // each profile's placements.
  struct FgdModelTables {
    std::vector<double> fragmentation;
    std::vector<std::vector<FgdPlacement>> placements;
  };

  void Prepare(const ChurnState& state) {
    if (!tables_.empty()) return;
    for (const GpuModel* model : state.cluster().models) {
      FgdModelTables t;
      t.fragmentation.resize(std::size_t{1} << model->memory_slices);
      for (std::uint32_t mask = 0; mask < t.fragmentation.size(); ++mask) {
        t.fragmentation[mask] = ChurnExpectedUnusable(*model, weights_, mask);
      }
      for (const MigProfile& prof : model->mig_profiles) {
        std::vector<FgdPlacement> list;
        for (int start : prof.starts) {
          if (start + prof.memory_slices <= model->memory_slices) list.push_back({start, SliceMask(prof, start)});
        }
        t.placements.push_back(std::move(list));
      }
      tables_.push_back(std::move(t));
    }
  }

  // Single-GPU pods: the (GPU, start) with the least increase of expected
  // unusable slices; ties to an existing free instance (no change), then the
  // fullest GPU, the busiest node, the lowest GPU and start.
  std::optional<ChurnDecision> PlaceOne(const ChurnState& state, const ChurnPod& pod) const {
    const auto& gpus = state.gpus();
    using Key = std::tuple<double, int, int, int>;  // delta, change, -gpu used, -node used
    std::optional<Key> best;
    int best_gpu = -1, best_start = 0, best_profile = -1;
    for (int g = 0; g < static_cast<int>(gpus.size()); ++g) {
      const ChurnGpu& gpu = gpus[g];
      const int p = state.ProfileOf(gpu.model, pod.shape);
      if (p < 0 || !state.ModelAllowed(pod, gpu.model) || !state.Usable(g)) continue;
      const GpuModel& model = *state.cluster().models[gpu.model];
      std::uint32_t used = 0, free_starts = 0;
      for (const ChurnInstance& inst : gpu.instances) {
        if (inst.pod >= 0) {
          used |= SliceMask(model.mig_profiles[inst.profile], inst.start);
        } else if (inst.profile == p) {
          free_starts |= 1u << inst.start;
        }
      }
      const FgdModelTables& t = tables_[gpu.model];
      const double before = t.fragmentation[used];
      for (const FgdPlacement& at : t.placements[p]) {
        if (at.mask & used) continue;
        const double delta = t.fragmentation[used | at.mask] - before;
        const Key key{std::round(delta * 1e9) / 1e9, ((free_starts >> at.start) & 1u) ? 0 : 1, -gpu.used_memory_slices,
                      -state.nodes()[gpu.node].used_memory_slices};
        if (!best || key < *best) {
          best = key;
          best_gpu = g;
          best_start = at.start;
          best_profile = p;
        }
      }
    }
    if (best_gpu < 0) return std::nullopt;
    std::vector<ChurnInstance> after = gpus[best_gpu].instances;
    const int slot = ChurnAddInstance(state.ModelOf(best_gpu), after, best_profile, best_start);
    return ChurnBindAfterChange(state, best_gpu, after, slot);
  }

  // k-GPU pods: k idle GPUs of one node, each a 7g instance. The increase is
  // the same on every idle GPU (empty to full), so ties go to the node with
  // the fewest idle GPUs (best fit, idle nodes stay whole for larger pods),
  // then the busiest node; within it, GPUs holding a free 7g first.
  std::optional<ChurnDecision> PlaceWhole(const ChurnState& state, const ChurnPod& pod) const {
    using Key = std::tuple<double, int, int>;  // delta, idle GPUs, -node used
    std::optional<Key> best;
    std::vector<int> best_gpus;
    const auto& nodes = state.nodes();
    for (int n = 0; n < static_cast<int>(nodes.size()); ++n) {
      const ChurnNode& node = nodes[n];
      const int p = state.ProfileOf(node.model, pod.shape);
      if (p < 0 || !state.ModelAllowed(pod, node.model)) continue;
      std::vector<int> idle;
      for (int g : node.gpus) {
        if (state.Idle(g) && state.Usable(g)) idle.push_back(g);
      }
      const int n_idle = static_cast<int>(idle.size());
      if (n_idle < pod.gpus) continue;
      std::stable_sort(idle.begin(), idle.end(),
                       [&](int a, int b) { return HasFree(state, a, p) > HasFree(state, b, p); });
      idle.resize(pod.gpus);
      const FgdModelTables& t = tables_[node.model];
      const std::uint32_t full = t.placements[p].empty() ? 0 : t.placements[p].front().mask;
      const double delta = pod.gpus * (t.fragmentation[full] - t.fragmentation[0]);
      const Key key{std::round(delta * 1e9) / 1e9, n_idle, -node.used_memory_slices};
      if (!best || key < *best) {
        best = key;
        best_gpus = idle;
      }
    }
    if (!best) return std::nullopt;
    ChurnDecision d;
    for (int g : best_gpus) {
      const int p = state.ProfileOf(state.gpus()[g].model, pod.shape);
      std::vector<ChurnInstance> after = state.gpus()[g].instances;
      const int slot =
          ChurnAddInstance(state.ModelOf(g), after, p, tables_[state.gpus()[g].model].placements[p][0].start);
      ChurnDecision one = ChurnBindAfterChange(state, g, after, slot);
      d.slots.push_back(one.slots.front());
      for (ChurnRelayout& r : one.relayouts) d.relayouts.push_back(std::move(r));
    }
    return d;
  }

  static bool HasFree(const ChurnState& state, int g, int profile) {
    const auto& insts = state.gpus()[g].instances;
    return std::any_of(insts.begin(), insts.end(),
                       [&](const ChurnInstance& inst) { return inst.pod < 0 && inst.profile == profile; });
  }

  std::array<double, kMigShapeCount> weights_ = {};
  double t_gi_s_ = 0;
  std::vector<FgdModelTables> tables_;  // per cluster model
};

}  // namespace

std::unique_ptr<ChurnPolicy> MakeFgdMigPolicy(const std::array<double, kMigShapeCount>& shares, double t_gi_s) {
  return std::make_unique<FgdMigPolicy>(shares, t_gi_s);
}

}  // namespace septa::gpu
