// P7, Septa's MIG policy in the churn benchmark: R-GPU re-layouts through
// nvidia.com/mig.config sized by the product's planner (gpu::PlanMigLayouts).
#include <algorithm>
#include <cmath>

#include "gpu/mig_churn.h"
#include "gpu/mig_churn_support.h"
#include "gpu/planner.h"

namespace septa::gpu {
namespace {

// --- P7 Septa: R-GPU via nvidia.com/mig.config, the product's planner ---

class SeptaMigPolicy : public ChurnPolicy {
 public:
  SeptaMigPolicy(const std::array<double, kMigShapeCount>& shares, double t_node_s, double pauses_per_1000)
      : shares_(shares), t_node_s_(t_node_s), pauses_per_1000_(pauses_per_1000) {}
  std::string name() const override { return "septa"; }
  // mig-manager: the node's device plugin and clients paused for the whole cycle.
  RelayoutCost Cost() const override { return {t_node_s_, t_node_s_}; }

  MigLayout InitialLayout(const ChurnState& state, int gpu) override {
    // Per model: the GPUs the forecast's sub-GPU shapes need, laid out by the
    // product's planner (on chunks of 8 GPUs, the chunk repeated), and
    // gathered on the model's last nodes; every other GPU one 7g instance.
    const int model = state.gpus()[gpu].model;
    if (positions_.empty()) {
      positions_ = ChurnModelPositions(state);
      initial_.resize(state.cluster().models.size());
      small_gpus_.assign(state.cluster().models.size(), 0);
    }
    const GpuModel& m = *state.cluster().models[model];
    const int n_model = positions_[gpu].second;
    if (initial_[model].empty()) {
      // Busy instances per shape at full load. GPUs are split between one 7g
      // and sub-GPU layouts in proportion to what each needs: one GPU per busy
      // 7g; for the rest their memory slices, but one GPU per busy 4g at least
      // (two 4g never share a GPU).
      std::array<double, kMigShapeCount> busy = {};
      double slices = 0;
      for (int s = 0; s < kMigShapeCount; ++s) {
        busy[s] = n_model * 7.0 * shares_[s] / kShapeCompute[s];
        if (s != k7g) slices += busy[s] * kShapeMemory[s];
      }
      const double need_small = std::max(busy[k4g], slices / 8.0);
      const double need = need_small + busy[k7g];
      const int small = need > 0 ? static_cast<int>(std::lround(n_model * need_small / need)) : 0;
      small_gpus_[model] = small;
      constexpr int kChunk = 8;  // one node: keeps the planner's state space small
      const int chunk = std::max(1, std::min(kChunk, small));
      // The chunk's demand: the sub-GPU mix scaled to the chunk's slices (the
      // planner packs it; FillWithSubGpuInstances uses what rounding leaves).
      std::array<int, kMigShapeCount> chunk_demand = {};
      for (int s = 0; s < kMigShapeCount; ++s) {
        if (s == k7g || slices <= 0) continue;
        chunk_demand[s] = static_cast<int>(busy[s] * chunk * 8.0 / std::max(slices, busy[k4g] * 8.0));
      }
      std::vector<PlannerGpu> gpus;
      for (int i = 0; i < chunk; ++i) gpus.push_back(PlannerGpu{"n", i, {}, {}, false});
      auto plan = PlanMigLayouts(m, ChurnProfileCounts(state, model, chunk_demand), gpus);
      for (int i = 0; i < chunk; ++i) {
        initial_[model].push_back(FillWithSubGpuInstances(m, plan.ok() ? plan->gpus[i].layout : MigLayout{}));
      }
    }
    const int position = positions_[gpu].first;
    const int first_small = n_model - small_gpus_[model];
    if (position < first_small) {
      std::array<int, kMigShapeCount> whole = {};
      whole[k7g] = 1;
      return ChurnLayoutOfCounts(m, ChurnProfileCounts(state, model, whole));
    }
    return initial_[model][(position - first_small) % initial_[model].size()];
  }

  std::optional<ChurnDecision> Place(const ChurnState& state, const ChurnPod& pod, bool may_relayout) override {
    // Fill partly used GPUs first, then busy nodes: idle GPUs and idle nodes
    // stay whole for 7g and multi-GPU pods and for re-layouts.
    auto node_score = [&](int n) { return static_cast<double>(state.nodes()[n].used_memory_slices) * 1e3 - n * 1e-6; };
    auto fit = ChurnExactFit(
        state, pod,
        [&](int g) {
          return static_cast<double>(state.gpus()[g].used_memory_slices) * 1e6 + node_score(state.gpus()[g].node);
        },
        node_score);
    if (fit) return fit;
    if (pod.gpus == 1) {
      // No free instance of the pod's profile: the smallest free instance that
      // covers it in compute and memory (the pod's MIG resource rewritten at admission).
      if (auto cover = CoverFit(state, pod)) return cover;
    }
    std::optional<ChurnDecision> relayout;
    if (may_relayout) {
      // Token bucket: pauses_per_1000 tokens per 1,000 arrivals, at most
      // kPauseBurst saved, one per node pause — holds the rate in any window.
      tokens_ = std::min(kPauseBurst, tokens_ + (state.arrivals() - seen_arrivals_) * pauses_per_1000_ / 1000.0);
      seen_arrivals_ = state.arrivals();
      if (tokens_ >= 1) relayout = Relayout(state, pod);
      if (relayout) tokens_ -= 1;
    }
    if (!relayout) last_refused_[pod.shape] = state.now();
    return relayout;
  }

 private:
  std::optional<ChurnDecision> CoverFit(const ChurnState& state, const ChurnPod& pod) const {
    std::optional<ChurnDecision> best;
    std::pair<int, double> best_key = {0, 0};
    const auto& gpus = state.gpus();
    for (int g = 0; g < static_cast<int>(gpus.size()); ++g) {
      if (!state.ModelAllowed(pod, gpus[g].model) || !state.Usable(g)) continue;
      const GpuModel& m = state.ModelOf(g);
      for (int i = 0; i < static_cast<int>(gpus[g].instances.size()); ++i) {
        const ChurnInstance& inst = gpus[g].instances[i];
        const MigProfile& prof = m.mig_profiles[inst.profile];
        if (inst.pod >= 0 || prof.compute_slices == 7 || prof.compute_slices < kShapeCompute[pod.shape] ||
            prof.memory_slices < kShapeMemory[pod.shape] || InDemand(state, gpus[g].model, inst.profile)) {
          continue;
        }
        // Least waste, then the fullest GPU.
        const std::pair<int, double> key = {-(prof.memory_slices + prof.compute_slices),
                                            static_cast<double>(gpus[g].used_memory_slices) - g * 1e-6};
        if (!best || key > best_key) {
          best = ChurnDecision::At({ChurnSlot{g, i}});
          best_key = key;
        }
      }
    }
    return best;
  }

  // Whether pods of the instance's own shape went unplaced lately: a smaller
  // pod must not take it then (a 1g pod on a free 4g while 4g pods wait
  // wastes three slices of a scarce shape). Without that demand the instance
  // would stay empty, and covering with it is free.
  bool InDemand(const ChurnState& state, int model, int profile) const {
    const int s = ProfileShape(state.cluster().models[model]->mig_profiles[profile]);
    return s >= 0 && state.now() - last_refused_[s] < kDemandWindowS;
  }

  // An idle GPU the pod's re-layout may take: any idle one. (Keeping idle 7g
  // GPUs from sub-GPU pods — a fixed reserve, or only while no 7g pod was
  // refused lately — was tried: it lost 5-6 points on the default trace,
  // whose 4g pods need those GPUs, and gained < 1 on small-heavy.)
  static bool Candidate(const ChurnState& state, int g, const ChurnPod& /*pod*/) {
    return state.Idle(g) && state.Usable(g);
  }

  // Re-lays out the idle GPUs of one node (one node pause) for the pod and
  // the forecast mix, through gpu::PlanMigLayouts.
  std::optional<ChurnDecision> Relayout(const ChurnState& state, const ChurnPod& pod) {
    int best_node = -1, best_idle = 0;
    for (int n = 0; n < static_cast<int>(state.nodes().size()); ++n) {
      const ChurnNode& node = state.nodes()[n];
      if (!state.ModelAllowed(pod, node.model) || state.ProfileOf(node.model, pod.shape) < 0) continue;
      int idle = 0;
      for (int g : node.gpus) idle += Candidate(state, g, pod) ? 1 : 0;
      if (idle >= pod.gpus && idle > best_idle) {
        best_node = n;
        best_idle = idle;
      }
    }
    if (best_node < 0) return std::nullopt;
    const ChurnNode& node = state.nodes()[best_node];
    const GpuModel& model = *state.cluster().models[node.model];
    const int p = state.ProfileOf(node.model, pod.shape);
    std::vector<PlannerGpu> gpus;
    std::vector<int> ids;
    for (int g : node.gpus) {
      if (!Candidate(state, g, pod)) continue;
      const MigLayout current = ChurnLayoutOf(state.gpus()[g].instances);
      gpus.push_back(
          PlannerGpu{"n", static_cast<int>(ids.size()), current, std::vector<bool>(current.size(), false), false});
      ids.push_back(g);
    }
    // Demand: the pod alone. The planner then re-lays out the fewest GPUs
    // (one, or k for a k-GPU pod) and fills the rest of each with the
    // largest shapes that fit; the other idle GPUs keep their layouts, so the
    // mix the initial layouts were sized for is disturbed as little as possible.
    std::vector<int> demand(model.mig_profiles.size(), 0);
    demand[p] = pod.gpus;
    auto plan = PlanMigLayouts(model, demand, gpus, MigPlanOptions{.fill_free_slices = true});
    if (!plan.ok()) return std::nullopt;
    ChurnDecision d;
    d.planned = true;
    for (std::size_t k = 0; k < plan->gpus.size(); ++k) {
      const GpuTarget& t = plan->gpus[k];
      if (t.reconfigure) d.relayouts.push_back(ChurnRelayout{ids[k], t.layout});
      const MigLayout& layout = t.reconfigure ? d.relayouts.back().layout : t.layout;
      if (static_cast<int>(d.slots.size()) == pod.gpus) continue;
      for (int i = 0; i < static_cast<int>(layout.size()); ++i) {
        if (layout[i].profile == p) {
          d.slots.push_back(ChurnSlot{ids[k], i});
          break;
        }
      }
    }
    if (d.relayouts.empty() || static_cast<int>(d.slots.size()) < pod.gpus) return std::nullopt;
    // A slot on a kept GPU must be free there (the layout is unchanged).
    for (const ChurnSlot& s : d.slots) {
      const bool relaid =
          std::any_of(d.relayouts.begin(), d.relayouts.end(), [&](const ChurnRelayout& r) { return r.gpu == s.gpu; });
      if (!relaid) {
        // Kept layout: the instance index of `t.layout` (creation order) may
        // differ from the GPU's own order; find the same instance there.
        const auto& insts = state.gpus()[s.gpu].instances;
        auto it = std::find_if(insts.begin(), insts.end(),
                               [&](const ChurnInstance& inst) { return inst.profile == p && inst.pod < 0; });
        if (it == insts.end()) return std::nullopt;
      }
    }
    for (ChurnSlot& s : d.slots) {
      const bool relaid =
          std::any_of(d.relayouts.begin(), d.relayouts.end(), [&](const ChurnRelayout& r) { return r.gpu == s.gpu; });
      if (relaid) continue;
      const auto& insts = state.gpus()[s.gpu].instances;
      for (int i = 0; i < static_cast<int>(insts.size()); ++i) {
        if (insts[i].profile == p && insts[i].pod < 0) {
          s.instance = i;
          break;
        }
      }
    }
    return d;
  }

  static constexpr double kPauseBurst = 3;
  // How long a refusal counts as demand: the queue's longest wait (MIG-BENCH's 300 s).
  static constexpr double kDemandWindowS = 300;

  std::array<double, kMigShapeCount> shares_ = {};
  double t_node_s_ = 0;
  double pauses_per_1000_ = 0;
  double tokens_ = 0;
  std::array<double, kMigShapeCount> last_refused_ = {-1e18, -1e18, -1e18, -1e18, -1e18, -1e18};
  int seen_arrivals_ = 0;
  std::vector<std::pair<int, int>> positions_;
  std::vector<std::vector<MigLayout>> initial_;  // per model: the sub-GPU chunk's layouts
  std::vector<int> small_gpus_;                  // per model: GPUs given sub-GPU layouts
};

}  // namespace

std::unique_ptr<ChurnPolicy> MakeSeptaPolicy(const std::array<double, kMigShapeCount>& shares, double t_node_s,
                                             double pauses_per_1000) {
  return std::make_unique<SeptaMigPolicy>(shares, t_node_s, pauses_per_1000);
}

}  // namespace septa::gpu
