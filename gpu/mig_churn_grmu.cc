// P6 of the MIG churn benchmark, GRMU-style (Siavashi & Momtazpour, arXiv
// 2502.01909; only the abstract could be read): GPUs in two quota-limited
// baskets (large profiles >= 3g, small < 3g), best fit within the pod's
// basket, then an intra-GPU repack of the free slices, then inter-GPU
// consolidation by drains within a budget of accepted pods. R-GI: running
// instances are never touched. docs/placement.md lists what is assumed.
#include <algorithm>
#include <climits>
#include <cmath>
#include <tuple>

#include "gpu/mig_churn.h"
#include "gpu/mig_churn_support.h"

namespace septa::gpu {
namespace {

constexpr int kGrmuSmall = 0, kGrmuLarge = 1, kGrmuIdle = -1;
// Marks, in a planned view of a GPU, an instance taken by the decision (the
// new pod's, or one kept for a drained pod): used, so never destroyed.
constexpr int kGrmuReserved = INT_MAX;
// Quota slack: a basket may hold this many times its slice share of a model's
// GPUs (small shapes pack less densely: three 2g use 6 of 7 compute slices).
constexpr double kGrmuQuotaSlack = 1.5;
// At most this many pods drained for one arrival, and candidate drain sets
// checked (each check re-places the drained pods on a copy of the GPUs).
constexpr int kGrmuMaxDrains = 3;
constexpr int kGrmuMaxChecks = 16;
// GPUs where a drained pod is looked for beside those the decision changes.
constexpr std::size_t kGrmuNear = 6;

int GrmuBasketOfShape(int shape) { return kShapeCompute[shape] >= 3 ? kGrmuLarge : kGrmuSmall; }

class GrmuPolicy : public ChurnPolicy {
 public:
  GrmuPolicy(const std::array<double, kMigShapeCount>& shares, double t_gi_s, double drain_budget_fraction)
      : t_gi_s_(t_gi_s), drain_fraction_(drain_budget_fraction) {
    double total = 0, large = 0;
    for (int s = 0; s < kMigShapeCount; ++s) {
      total += std::max(0.0, shares[s]);
      if (GrmuBasketOfShape(s) == kGrmuLarge) large += std::max(0.0, shares[s]);
    }
    share_[kGrmuLarge] = total > 0 ? large / total : 0.5;
    share_[kGrmuSmall] = 1 - share_[kGrmuLarge];
  }
  std::string name() const override { return "grmu"; }
  RelayoutCost Cost() const override { return {0, 0, t_gi_s_}; }

  std::optional<ChurnDecision> Place(const ChurnState& state, const ChurnPod& pod, bool may_relayout) override {
    Prepare(state);
    Census(state);
    // A pod this policy drained goes back on an existing free instance if one
    // is left (loss mode re-places drained pods at once, without changes);
    // it is not counted again and never drains others.
    for (std::size_t i = 0; i < drained_.size(); ++i) {
      if (&state.pod(drained_[i]) != &pod) continue;
      std::optional<ChurnDecision> d = pod.gpus > 1 ? PlaceWhole(state, pod) : Existing(state, pod);
      if (!d && pod.gpus == 1) d = PlaceOne(state, pod, false);
      if (d) drained_.erase(drained_.begin() + static_cast<long>(i));
      return d;
    }
    std::optional<ChurnDecision> d = pod.gpus > 1 ? PlaceWhole(state, pod) : PlaceOne(state, pod, may_relayout);
    // The drain budget counts the accepted pods: `drain_fraction_` of a
    // drain each, at most kGrmuMaxDrains saved, so that drains stay within
    // the fraction of the pods accepted in any window (a budget saved while
    // the cluster filled up would otherwise be spent at once).
    if (d) drain_tokens_ = Tokens() - static_cast<double>(d->drains.size());
    return d;
  }

 private:
  // How far a fit may change a GPU: use an existing free instance only;
  // also create on slices no instance holds; also destroy free instances
  // (the intra-GPU repack).
  enum class Reach { kExisting, kAbsent, kRepack };
  using FitKey = std::tuple<int, int, int, int>;  // free slices after, change, -node used, gpu
  struct Fit {
    int gpu = -1;
    int profile = -1;
    int start = 0;
    FitKey key;
  };
  struct Candidate {
    std::tuple<int, double, int, int, int> key;  // drains, lost work, free after, gpu, start
    std::uint32_t blockers = 0;                  // bit per instance index on the GPU
  };

  // A copy of some GPUs' instances as a decision would leave them.
  struct View {
    std::vector<std::pair<int, std::vector<ChurnInstance>>> changed;
    std::vector<std::pair<int, int>> joined;  // GPU, basket it joins
    const std::vector<ChurnInstance>& Of(const ChurnState& state, int g) const {
      for (const auto& [gpu, insts] : changed) {
        if (gpu == g) return insts;
      }
      return state.gpus()[g].instances;
    }
    std::vector<ChurnInstance>& Edit(const ChurnState& state, int g) {
      for (auto& [gpu, insts] : changed) {
        if (gpu == g) return insts;
      }
      changed.emplace_back(g, state.gpus()[g].instances);
      return changed.back().second;
    }
  };

  void Prepare(const ChurnState& state) {
    if (!quota_.empty()) return;
    const int models = static_cast<int>(state.cluster().models.size());
    for (const GpuModel* m : state.cluster().models) profiles_ = std::max(profiles_, m->mig_profiles.size());
    std::vector<int> n(models, 0);
    for (const ChurnGpu& g : state.gpus()) ++n[g.model];
    quota_.assign(models, {0, 0});
    for (int m = 0; m < models; ++m) {
      for (int b : {kGrmuSmall, kGrmuLarge}) {
        quota_[m][b] = std::min(n[m], std::max(1, static_cast<int>(std::ceil(n[m] * share_[b] * kGrmuQuotaSlack))));
      }
    }
  }

  // Each GPU's basket (idle GPUs belong to none), the baskets' sizes per
  // model, and each GPU's slices as FitOn reads them.
  void Census(const ChurnState& state) {
    const auto& gpus = state.gpus();
    basket_.assign(gpus.size(), kGrmuIdle);
    count_.assign(state.cluster().models.size(), {0, 0});
    slices_.resize(gpus.size());
    usable_.resize(gpus.size());
    free_starts_.assign(gpus.size() * profiles_, 0);
    for (int g = 0; g < static_cast<int>(gpus.size()); ++g) {
      slices_[g] = Slices(state.ModelOf(g), gpus[g].instances, &free_starts_[g * profiles_]);
      usable_[g] = state.Usable(g) ? 1 : 0;
      if (state.Idle(g)) continue;
      basket_[g] = GpuBasket(state.ModelOf(g), gpus[g].instances);
      ++count_[gpus[g].model][basket_[g]];
    }
  }

  // A GPU's slices: those of running pods (and reserved ones), those of any
  // instance; per profile, a bit per start of its free instances.
  struct GpuSlices {
    std::uint32_t used = 0, all = 0;
    int used_slices = 0;
  };
  static GpuSlices Slices(const GpuModel& model, const std::vector<ChurnInstance>& instances,
                          std::uint32_t* free_starts) {
    GpuSlices s;
    for (const ChurnInstance& inst : instances) {
      const MigProfile& ip = model.mig_profiles[inst.profile];
      const std::uint32_t m = SliceMask(ip, inst.start);
      s.all |= m;
      if (inst.pod >= 0) {
        s.used |= m;
        s.used_slices += ip.memory_slices;
      } else {
        free_starts[inst.profile] |= 1u << inst.start;
      }
    }
    return s;
  }

  static int GpuBasket(const GpuModel& model, const std::vector<ChurnInstance>& instances) {
    bool used = false;
    for (const ChurnInstance& inst : instances) {
      if (inst.pod < 0) continue;
      if (model.mig_profiles[inst.profile].compute_slices >= 3) return kGrmuLarge;
      used = true;
    }
    return used ? kGrmuSmall : kGrmuIdle;
  }

  // Whether GPU g may take a pod of `basket`: in that basket, or idle while
  // the basket is under its quota (`view` adds the GPUs a plan makes join).
  bool InBasket(const ChurnState& state, int g, int basket, const View* view) const {
    int b = basket_[g];
    int count = count_[state.gpus()[g].model][basket];
    if (view != nullptr) {
      const auto& insts = view->Of(state, g);
      if (&insts != &state.gpus()[g].instances) b = GpuBasket(state.ModelOf(g), insts);
      for (const auto& [gpu, joined] : view->joined) {
        if (joined == basket && state.gpus()[gpu].model == state.gpus()[g].model) ++count;
      }
    }
    if (b == basket) return true;
    return b == kGrmuIdle && count < quota_[state.gpus()[g].model][basket];
  }

  // The fit of a single-GPU pod on GPU g, if any, with its best-fit key:
  // free slices left (slices no running pod holds) the fewest, then no
  // change, the busiest node, the lowest GPU. Starts in HAMi v2.10's order
  // (1g and 3g from the highest start down, the others from the lowest up);
  // GRMU's own is not published. `exclude` = (GPU, start) not to use.
  std::optional<Fit> FitOn(const ChurnState& state, const ChurnPod& pod, int g, Reach reach, const View* view,
                           std::pair<int, int> exclude) const {
    const ChurnGpu& gpu = state.gpus()[g];
    const int p = state.ProfileOf(gpu.model, pod.shape);
    if (p < 0 || !state.ModelAllowed(pod, gpu.model) || !usable_[g]) return std::nullopt;
    if (!InBasket(state, g, GrmuBasketOfShape(pod.shape), view)) return std::nullopt;
    const GpuModel& model = state.ModelOf(g);
    const MigProfile& prof = model.mig_profiles[p];
    GpuSlices slices = slices_[g];
    std::uint32_t free_starts = free_starts_[g * profiles_ + p];
    if (view != nullptr) {
      const auto& insts = view->Of(state, g);
      if (&insts != &gpu.instances) {
        std::vector<std::uint32_t> starts(profiles_, 0);
        slices = Slices(model, insts, starts.data());
        free_starts = starts[p];
      }
    }
    if (g == exclude.first && exclude.second >= 0) free_starts &= ~(1u << exclude.second);
    const int free_after = model.memory_slices - slices.used_slices - prof.memory_slices;
    if (free_after < 0) return std::nullopt;
    std::optional<int> existing;
    for (int s : prof.starts) {
      if (((free_starts >> s) & 1u) && (!existing || Earlier(prof, s, *existing))) existing = s;
    }
    std::optional<int> start = existing;
    if (!start && reach != Reach::kExisting) {
      const std::uint32_t blocked = reach == Reach::kRepack ? slices.used : slices.all;
      for (int s : prof.starts) {
        if (s + prof.memory_slices > model.memory_slices || (SliceMask(prof, s) & blocked) != 0) continue;
        if (g == exclude.first && s == exclude.second) continue;
        if (!start || Earlier(prof, s, *start)) start = s;
      }
    }
    if (!start) return std::nullopt;
    return Fit{g, p, *start, {free_after, existing ? 0 : 1, -state.nodes()[gpu.node].used_memory_slices, g}};
  }

  // The best fit over every GPU, or over `only`.
  std::optional<Fit> BestFit(const ChurnState& state, const ChurnPod& pod, Reach reach, const View* view,
                             std::pair<int, int> exclude = {-1, -1}, const std::vector<int>* only = nullptr) const {
    std::optional<Fit> best;
    const int n = only != nullptr ? static_cast<int>(only->size()) : static_cast<int>(state.gpus().size());
    for (int k = 0; k < n; ++k) {
      auto fit = FitOn(state, pod, only != nullptr ? (*only)[k] : k, reach, view, exclude);
      if (fit && (!best || fit->key < best->key)) best = fit;
    }
    return best;
  }

  // The kGrmuNear GPUs where a pod like `pod` fits best now (repack allowed),
  // per shape and model mask, kept for one Consolidate call. A drained pod
  // goes to one of them or to a GPU the decision changes: every other GPU is
  // as it is now, and one where it fits is among them, unless all of them
  // are taken by the decision's few other drained pods.
  std::vector<int> NearFits(const ChurnState& state, const ChurnPod& pod) const {
    const std::uint64_t key = static_cast<std::uint64_t>(pod.shape) | static_cast<std::uint64_t>(pod.model_mask) << 8;
    for (const auto& [k, gpus] : near_fits_) {
      if (k == key) return gpus;
    }
    std::vector<Fit> fits;
    for (int g = 0; g < static_cast<int>(state.gpus().size()); ++g) {
      if (auto fit = FitOn(state, pod, g, Reach::kRepack, nullptr, {-1, -1})) fits.push_back(*fit);
    }
    const auto keep = std::min<std::size_t>(fits.size(), kGrmuNear);
    std::partial_sort(fits.begin(), fits.begin() + static_cast<long>(keep), fits.end(),
                      [](const Fit& a, const Fit& b) { return a.key < b.key; });
    std::vector<int> gpus;
    for (std::size_t i = 0; i < keep; ++i) gpus.push_back(fits[i].gpu);
    near_fits_.emplace_back(key, gpus);
    return gpus;
  }

  // The drain budget once the pod being placed is accepted.
  double Tokens() const { return std::min<double>(kGrmuMaxDrains, drain_tokens_ + drain_fraction_); }

  static bool Earlier(const MigProfile& prof, int a, int b) {
    const bool high_first = prof.compute_slices == 1 || prof.compute_slices == 3;
    return high_first ? a > b : a < b;
  }

  ChurnDecision Bind(const ChurnState& state, const Fit& fit) const {
    std::vector<ChurnInstance> after = state.gpus()[fit.gpu].instances;
    const int slot = ChurnAddInstance(state.ModelOf(fit.gpu), after, fit.profile, fit.start);
    return ChurnBindAfterChange(state, fit.gpu, after, slot);
  }

  std::optional<ChurnDecision> Existing(const ChurnState& state, const ChurnPod& pod) const {
    auto fit = BestFit(state, pod, Reach::kExisting, nullptr);
    if (!fit) return std::nullopt;
    return Bind(state, *fit);
  }

  // Best fit; then the intra-GPU repack (free instances destroyed for the
  // pod's); then, when the simulator allows changes, consolidation by drains.
  std::optional<ChurnDecision> PlaceOne(const ChurnState& state, const ChurnPod& pod, bool may_drain) {
    for (Reach reach : {Reach::kAbsent, Reach::kRepack}) {
      if (auto fit = BestFit(state, pod, reach, nullptr)) return Bind(state, *fit);
    }
    if (!may_drain) return std::nullopt;
    return Consolidate(state, pod);
  }

  // k-GPU pods: k idle GPUs of one node join the large basket (within its
  // quota), each a 7g; best fit = the node with the fewest idle GPUs.
  std::optional<ChurnDecision> PlaceWhole(const ChurnState& state, const ChurnPod& pod) const {
    std::optional<std::tuple<int, int, int>> best;  // idle GPUs, -node used, node
    std::vector<int> best_gpus;
    for (int n = 0; n < static_cast<int>(state.nodes().size()); ++n) {
      const ChurnNode& node = state.nodes()[n];
      const int p = state.ProfileOf(node.model, pod.shape);
      if (p < 0 || !state.ModelAllowed(pod, node.model)) continue;
      if (count_[node.model][kGrmuLarge] + pod.gpus > quota_[node.model][kGrmuLarge]) continue;
      std::vector<int> idle;
      for (int g : node.gpus) {
        if (state.Idle(g) && state.Usable(g)) idle.push_back(g);
      }
      if (static_cast<int>(idle.size()) < pod.gpus) continue;
      const std::tuple<int, int, int> key{static_cast<int>(idle.size()), -node.used_memory_slices, n};
      if (!best || key < *best) {
        best = key;
        idle.resize(pod.gpus);
        best_gpus = idle;
      }
    }
    if (!best) return std::nullopt;
    ChurnDecision d;
    for (int g : best_gpus) {
      const int p = state.ProfileOf(state.gpus()[g].model, pod.shape);
      ChurnDecision one = Bind(state, Fit{g, p, state.ModelOf(g).mig_profiles[p].starts.front(), {}});
      d.slots.push_back(one.slots.front());
      for (ChurnRelayout& r : one.relayouts) d.relayouts.push_back(std::move(r));
    }
    return d;
  }

  // Inter-GPU consolidation: on a GPU of the pod's basket, drain the fewest
  // single-GPU pods (then the least work lost: the youngest) whose slices and
  // the free ones host the pod, if the budget allows and the drained pods fit
  // elsewhere right now (their instances are created in the same decision).
  std::optional<ChurnDecision> Consolidate(const ChurnState& state, const ChurnPod& pod) {
    const int cap = std::min(static_cast<int>(std::floor(Tokens() + 1e-9)), kGrmuMaxDrains);
    if (cap < 1) return std::nullopt;
    const int basket = GrmuBasketOfShape(pod.shape);
    const auto& gpus = state.gpus();
    std::vector<Candidate> candidates;
    for (int g = 0; g < static_cast<int>(gpus.size()); ++g) {
      const int p = state.ProfileOf(gpus[g].model, pod.shape);
      if (p < 0 || basket_[g] != basket || !state.ModelAllowed(pod, gpus[g].model) || !usable_[g]) continue;
      const GpuModel& model = state.ModelOf(g);
      const MigProfile& prof = model.mig_profiles[p];
      const auto& insts = gpus[g].instances;
      for (int s : prof.starts) {
        if (s + prof.memory_slices > model.memory_slices) continue;
        const std::uint32_t want = SliceMask(prof, s);
        std::uint32_t blockers = 0;
        int drains = 0;
        double lost = 0;
        int freed = 0;
        bool ok = true;
        for (int i = 0; i < static_cast<int>(insts.size()) && ok; ++i) {
          const ChurnInstance& inst = insts[i];
          const MigProfile& ip = model.mig_profiles[inst.profile];
          if (inst.pod < 0 || (SliceMask(ip, inst.start) & want) == 0) continue;
          ok = state.pod(inst.pod).gpus == 1;
          blockers |= 1u << i;
          ++drains;
          lost += ip.compute_slices * std::max(0.0, state.now() - state.started(inst.pod));
          freed += ip.memory_slices;
        }
        if (!ok || drains == 0 || drains > cap) continue;
        const int free_after = model.memory_slices - gpus[g].used_memory_slices + freed - prof.memory_slices;
        candidates.push_back(Candidate{{drains, lost, free_after, g, s}, blockers});
      }
    }
    if (candidates.empty()) return std::nullopt;
    const auto checks = std::min<std::size_t>(candidates.size(), kGrmuMaxChecks);
    std::partial_sort(candidates.begin(), candidates.begin() + static_cast<long>(checks), candidates.end(),
                      [](const Candidate& a, const Candidate& b) { return a.key < b.key; });
    near_fits_.clear();
    for (std::size_t c = 0; c < checks; ++c) {
      if (auto d = DrainPlan(state, pod, candidates[c])) {
        for (int id : d->drains) drained_.push_back(id);
        return d;
      }
    }
    return std::nullopt;
  }

  // The decision for a drain candidate, or nullopt when a drained pod would
  // fit nowhere: each is placed (best fit, repack allowed, in its basket) on
  // the GPUs as the decision leaves them, not on the instance it leaves.
  std::optional<ChurnDecision> DrainPlan(const ChurnState& state, const ChurnPod& pod, const Candidate& c) const {
    const int g = std::get<3>(c.key), start = std::get<4>(c.key);
    const GpuModel& model = state.ModelOf(g);
    View view;
    view.changed.reserve(kGrmuMaxDrains + 1);  // `target` stays valid
    std::vector<ChurnInstance>& target = view.Edit(state, g);
    ChurnDecision d;
    std::vector<std::pair<int, int>> left;  // each drained pod's instance (GPU, start)
    for (int i = 0; i < static_cast<int>(target.size()); ++i) {
      if (((c.blockers >> i) & 1u) == 0) continue;
      d.drains.push_back(target[i].pod);
      left.emplace_back(g, target[i].start);
      target[i].pod = -1;
    }
    const int p = state.ProfileOf(state.gpus()[g].model, pod.shape);
    const int at = ChurnAddInstance(model, target, p, start);
    target[at].pod = kGrmuReserved;
    for (std::size_t k = 0; k < d.drains.size(); ++k) {
      const ChurnPod& drained = state.pod(d.drains[k]);
      std::vector<int> look = NearFits(state, drained);
      for (const auto& entry : view.changed) {
        if (std::find(look.begin(), look.end(), entry.first) == look.end()) look.push_back(entry.first);
      }
      std::optional<Fit> fit;
      for (Reach reach : {Reach::kExisting, Reach::kAbsent, Reach::kRepack}) {
        if ((fit = BestFit(state, drained, reach, &view, left[k], &look))) break;
      }
      if (!fit) return std::nullopt;
      const bool was_idle = GpuBasket(state.ModelOf(fit->gpu), view.Of(state, fit->gpu)) == kGrmuIdle;
      std::vector<ChurnInstance>& insts = view.Edit(state, fit->gpu);
      const int at = ChurnAddInstance(state.ModelOf(fit->gpu), insts, fit->profile, fit->start);
      insts[at].pod = kGrmuReserved;
      if (was_idle) view.joined.emplace_back(fit->gpu, GrmuBasketOfShape(drained.shape));
    }
    for (const auto& [gpu, insts] : view.changed) {
      MigLayout layout = ChurnLayoutOf(insts);
      if (layout != ChurnLayoutOf(state.gpus()[gpu].instances))
        d.relayouts.push_back(ChurnRelayout{gpu, std::move(layout), true});
    }
    // The pod's instance, where re-placing the drained pods left it.
    const auto& after = view.Of(state, g);
    for (int i = 0; i < static_cast<int>(after.size()); ++i) {
      if (after[i].profile == p && after[i].start == start) d.slots.push_back(ChurnSlot{g, i});
    }
    return d;
  }

  double t_gi_s_ = 0;
  double drain_fraction_ = 0;
  std::array<double, 2> share_ = {};                                           // slice share per basket
  std::vector<std::array<int, 2>> quota_;                                      // per model, per basket: GPUs
  std::vector<std::array<int, 2>> count_;                                      // per model, per basket: GPUs in it now
  std::vector<int> basket_;                                                    // per GPU
  std::vector<GpuSlices> slices_;                                              // per GPU
  std::vector<char> usable_;                                                   // per GPU
  std::vector<std::uint32_t> free_starts_;                                     // per GPU × profile
  std::size_t profiles_ = 0;                                                   // the most profiles of a cluster model
  std::vector<int> drained_;                                                   // pods drained and not placed again
  mutable std::vector<std::pair<std::uint64_t, std::vector<int>>> near_fits_;  // NearFits', per Consolidate
  double drain_tokens_ = 0;                                                    // drains the budget allows now
};

}  // namespace

std::unique_ptr<ChurnPolicy> MakeGrmuPolicy(const std::array<double, kMigShapeCount>& shares, double t_gi_s,
                                            double drain_budget_fraction) {
  return std::make_unique<GrmuPolicy>(shares, t_gi_s, drain_budget_fraction);
}

}  // namespace septa::gpu
