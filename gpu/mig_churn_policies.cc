// The policies of the MIG churn benchmark (MIG-BENCH §5). Each baseline
// re-implements what MIG-BENCH §2 read in the real code; docs/placement.md
// cites the sources and lists where a policy departs from them.
#include <algorithm>
#include <cmath>
#include <map>

#include "gpu/mig_churn.h"
#include "gpu/mig_churn_support.h"

namespace septa::gpu {
namespace {

// --- P0 static ---

class StaticPolicy : public ChurnPolicy {
 public:
  explicit StaticPolicy(const std::array<double, kMigShapeCount>& shares) {
    // Busy instances per GPU at full load, then GPUs of each fixed layout:
    // 7g for 7g pods; 4g+3g for 4g pods; 3g×2 for the 3g pods 4g+3g leaves;
    // balanced (1g×2 + 2g + 3g) for the small shapes.
    const std::array<int, kMigShapeCount> per100 = ChurnForecast(shares, 100, 1.0);
    const double n7 = per100[k7g];
    const double n43 = per100[k4g];
    const double n_bal = std::max((per100[k1g] + per100[k1gDoubleMemory]) / 2.0, static_cast<double>(per100[k2g]));
    const double n33 = std::max(0.0, per100[k3g] - n43 - n_bal) / 2.0;
    const double total = n7 + n43 + n_bal + n33;
    fractions_ = {n_bal / total, n43 / total, n33 / total, n7 / total};
  }
  std::string name() const override { return "static"; }

  MigLayout InitialLayout(const ChurnState& state, int gpu) override {
    if (positions_.empty()) positions_ = ChurnModelPositions(state);
    const double at = (positions_[gpu].first + 0.5) / positions_[gpu].second;
    int type = 0;
    double cumulative = 0;
    for (; type < 3; ++type) {
      cumulative += fractions_[type];
      if (at < cumulative) break;
    }
    const int model = state.gpus()[gpu].model;
    if (type == 0) return ChurnPolicy::InitialLayout(state, gpu);
    std::array<int, kMigShapeCount> shapes = {};
    if (type == 1) shapes[k4g] = shapes[k3g] = 1;
    if (type == 2) shapes[k3g] = 2;
    if (type == 3) shapes[k7g] = 1;
    return ChurnLayoutOfCounts(*state.cluster().models[model], ChurnProfileCounts(state, model, shapes));
  }

  std::optional<ChurnDecision> Place(const ChurnState& state, const ChurnPod& pod, bool /*may_relayout*/) override {
    auto node_score = [&](int n) { return ChurnLeastAllocated(state, n); };
    return ChurnExactFit(
        state, pod, [&](int g) { return node_score(state.gpus()[g].node); }, node_score);
  }

 private:
  std::array<double, 4> fractions_ = {};  // balanced, 4g+3g, 3g×2, 7g
  std::vector<std::pair<int, int>> positions_;
};

// --- P1 HAMi templates (≤ v2.9) ---

class HamiTemplatesPolicy : public ChurnPolicy {
 public:
  explicit HamiTemplatesPolicy(double t_gi_s) : t_gi_s_(t_gi_s) {}
  std::string name() const override { return "hami-templates"; }
  RelayoutCost Cost() const override { return {t_gi_s_, 0}; }

  std::optional<ChurnDecision> Place(const ChurnState& state, const ChurnPod& pod, bool /*may_relayout*/) override {
    Prepare(state);
    const int need = kShapeMemory[pod.shape];  // HAMi matches GPU memory only
    // nodeSchedulerPolicy binpack: most used node first.
    std::vector<int> nodes;
    for (int n = 0; n < static_cast<int>(state.nodes().size()); ++n) {
      if (state.ModelAllowed(pod, state.nodes()[n].model)) nodes.push_back(n);
    }
    std::stable_sort(nodes.begin(), nodes.end(), [&](int a, int b) {
      return state.nodes()[a].used_memory_slices > state.nodes()[b].used_memory_slices;
    });
    for (int n : nodes) {
      // gpuSchedulerPolicy spread: least used GPU of the node first.
      std::vector<int> gpus = state.nodes()[n].gpus;
      std::stable_sort(gpus.begin(), gpus.end(), [&](int a, int b) {
        return state.gpus()[a].used_memory_slices < state.gpus()[b].used_memory_slices;
      });
      ChurnDecision d;
      for (int g : gpus) {
        if (!state.Usable(g)) continue;
        if (auto slot = SlotOn(state, g, need, d)) d.slots.push_back(*slot);
        if (static_cast<int>(d.slots.size()) == pod.gpus) break;
      }
      if (static_cast<int>(d.slots.size()) == pod.gpus) {
        for (const ChurnRelayout& r : d.relayouts) template_of_[r.gpu] = pending_template_[r.gpu];
        return d;
      }
    }
    return std::nullopt;
  }

 private:
  struct Template {
    MigLayout layout;
    std::vector<int> order;  // instance indices in the template's entry order
  };

  void Prepare(const ChurnState& state) {
    if (!templates_.empty()) return;
    // charts/hami values.yaml knownMigGeometries, per model in this order.
    const std::vector<std::vector<std::pair<int, int>>> entries = {
        {{k1g, 7}}, {{k1g, 1}, {k2g, 3}}, {{k3g, 2}}, {{k7g, 1}}};
    for (int m = 0; m < static_cast<int>(state.cluster().models.size()); ++m) {
      const GpuModel& model = *state.cluster().models[m];
      std::vector<Template> list;
      for (const auto& entry : entries) {
        std::array<int, kMigShapeCount> shapes = {};
        for (const auto& [shape, count] : entry) shapes[shape] = count;
        Template t;
        t.layout = ChurnLayoutOfCounts(model, ChurnProfileCounts(state, m, shapes));
        for (const auto& e : entry) {
          const int p = state.ProfileOf(m, e.first);
          for (int i = 0; i < static_cast<int>(t.layout.size()); ++i) {
            if (t.layout[i].profile == p) t.order.push_back(i);
          }
        }
        list.push_back(std::move(t));
      }
      templates_.push_back(std::move(list));
    }
    template_of_.assign(state.gpus().size(), -1);
    pending_template_.assign(state.gpus().size(), -1);
  }

  int MemoryOf(const ChurnState& state, int g, int profile) const {
    return state.ModelOf(g).mig_profiles[profile].memory_slices;
  }

  // The instance HAMi gives a request of `need` memory slices on GPU g.
  std::optional<ChurnSlot> SlotOn(const ChurnState& state, int g, int need, ChurnDecision& d) {
    const ChurnGpu& gpu = state.gpus()[g];
    if (state.Idle(g)) {
      // No used instance: the first template holding an entry >= need is instantiated.
      const auto& list = templates_[gpu.model];
      for (int t = 0; t < static_cast<int>(list.size()); ++t) {
        for (int i : list[t].order) {
          if (MemoryOf(state, g, list[t].layout[i].profile) < need) continue;
          if (template_of_[g] != t || ChurnLayoutOf(gpu.instances) != list[t].layout) {
            d.relayouts.push_back(ChurnRelayout{g, list[t].layout});
            pending_template_[g] = t;
          }
          return ChurnSlot{g, i};
        }
      }
      return std::nullopt;
    }
    // Template frozen: the first unused entry with enough memory (first fit).
    std::vector<int> order;
    if (template_of_[g] >= 0) {
      order = templates_[gpu.model][template_of_[g]].order;
    } else {
      for (int i = 0; i < static_cast<int>(gpu.instances.size()); ++i) order.push_back(i);
    }
    for (int i : order) {
      if (gpu.instances[i].pod < 0 && MemoryOf(state, g, gpu.instances[i].profile) >= need) return ChurnSlot{g, i};
    }
    return std::nullopt;
  }

  double t_gi_s_ = 0;
  std::vector<std::vector<Template>> templates_;  // per model
  std::vector<int> template_of_;                  // per GPU; -1 = the initial layout
  std::vector<int> pending_template_;
};

// --- P3 nos batch planner: R-GPU variant and nos itself (R-GI) ---

class NosPolicy : public ChurnPolicy {
 public:
  NosPolicy(double t_gi_s, double t_dp_s, bool per_instance)
      : t_gi_s_(t_gi_s), t_dp_s_(t_dp_s), per_instance_(per_instance) {}
  std::string name() const override { return per_instance_ ? "nos-rgi" : "nos"; }
  // mig-agent creates through NVML, then restarts the node's device plugin:
  // binds on the node wait for it, new instances are advertised after it.
  RelayoutCost Cost() const override {
    return per_instance_ ? RelayoutCost{0, t_dp_s_, t_gi_s_ + t_dp_s_} : RelayoutCost{t_gi_s_ + t_dp_s_, t_dp_s_, 0};
  }

  MigLayout InitialLayout(const ChurnState& state, int gpu) override {
    Prepare(state);
    // The allowed geometry with the fewest distinct profiles (the first such).
    const auto& list = geometries_[state.gpus()[gpu].model];
    std::size_t best = 0;
    int best_distinct = 1 << 20;
    for (std::size_t i = 0; i < list.size(); ++i) {
      const int distinct =
          static_cast<int>(std::count_if(list[i].shapes.begin(), list[i].shapes.end(), [](int c) { return c > 0; }));
      if (distinct < best_distinct) {
        best = i;
        best_distinct = distinct;
      }
    }
    return list.empty() ? MigLayout{} : list[best].layout;
  }

  std::optional<ChurnDecision> Place(const ChurnState& state, const ChurnPod& pod, bool /*may_relayout*/) override {
    auto node_score = [&](int n) { return ChurnLeastAllocated(state, n); };
    return ChurnExactFit(
        state, pod, [&](int g) { return node_score(state.gpus()[g].node); }, node_score);
  }

  std::optional<double> WakeAt() const override { return wake_; }

  std::vector<ChurnRelayout> Plan(const ChurnState& state, const std::vector<const ChurnPod*>& waiting) override {
    Prepare(state);
    const double now = state.now();
    if (waiting.empty()) {
      open_.reset();
      wake_.reset();
      last_waiting_ = 0;
      return {};
    }
    if (!open_) {
      open_ = now;
      last_new_ = now;
    }
    if (waiting.size() > last_waiting_) last_new_ = now;
    last_waiting_ = waiting.size();
    // The batch closes 60 s after it opened or 10 s after the last new pending pod.
    wake_ = std::min(*open_ + 60.0, last_new_ + 10.0);
    if (now < *wake_) return {};
    // No new plan while a node has not applied the previous one.
    for (int g = 0; g < static_cast<int>(state.gpus().size()); ++g) {
      if (!state.Usable(g)) {
        wake_.reset();
        return {};
      }
    }
    open_.reset();
    wake_.reset();
    return PlanBatch(state, waiting);
  }

 private:
  struct Geometry {
    MigLayout layout;
    std::array<int, kMigShapeCount> shapes = {};
  };

  void Prepare(const ChurnState& state) {
    if (!geometries_.empty()) return;
    // Allowed geometries: the maximal layouts without 1g double-memory and +me
    // instances (NVIDIA's supported-configurations table, which nos's
    // known_configs copy for A100; H100/H200 added the same way), full GPU first.
    for (int m = 0; m < static_cast<int>(state.cluster().models.size()); ++m) {
      const GpuModel& model = *state.cluster().models[m];
      std::vector<Geometry> list;
      for (const MigLayout& layout : MaximalLayouts(model)) {
        Geometry g;
        g.layout = layout;
        bool ok = true;
        for (const MigInstance& inst : layout) {
          const int shape = ProfileShape(model.mig_profiles[inst.profile]);
          if (shape < 0 || shape == k1gDoubleMemory) ok = false;
          if (shape >= 0) ++g.shapes[shape];
        }
        if (ok) list.push_back(std::move(g));
      }
      std::stable_sort(list.begin(), list.end(), [](const Geometry& a, const Geometry& b) {
        return std::lexicographical_compare(a.shapes.rbegin(), a.shapes.rend(), b.shapes.rbegin(), b.shapes.rend(),
                                            std::greater<>());
      });
      geometries_.push_back(std::move(list));
    }
  }

  std::vector<ChurnRelayout> PlanBatch(const ChurnState& state, const std::vector<const ChurnPod*>& waiting) {
    // Lacking = requested - free, per shape, cluster-wide.
    std::array<int, kMigShapeCount> lacking = {};
    for (const ChurnPod* p : waiting) lacking[p->shape] += p->gpus;
    for (int s = 0; s < kMigShapeCount; ++s) {
      for (int m = 0; m < static_cast<int>(state.cluster().models.size()); ++m) {
        lacking[s] -= state.FreeUsable(m, state.ProfileOf(m, s));
      }
      lacking[s] = std::max(0, lacking[s]);
    }
    if (std::all_of(lacking.begin(), lacking.end(), [](int l) { return l == 0; })) return {};
    // Pending pods, smaller profile first.
    std::vector<const ChurnPod*> pending = waiting;
    std::stable_sort(pending.begin(), pending.end(),
                     [](const ChurnPod* a, const ChurnPod* b) { return a->ComputeSlices() < b->ComputeSlices(); });
    std::vector<ChurnRelayout> out;
    for (int n = 0; n < static_cast<int>(state.nodes().size()); ++n) {  // by node name
      if (std::all_of(lacking.begin(), lacking.end(), [](int l) { return l == 0; })) break;
      const ChurnNode& node = state.nodes()[n];
      const GpuModel& model = *state.cluster().models[node.model];
      std::array<int, kMigShapeCount> trial = lacking;
      std::vector<ChurnRelayout> changes;
      std::array<int, kMigShapeCount> node_free = {};
      int free_7g_gpus = 0;
      for (int g : node.gpus) {
        if (!state.Usable(g)) continue;
        std::array<int, kMigShapeCount> gpu_free = {};
        for (const ChurnInstance& inst : state.gpus()[g].instances) {
          const int s = ProfileShape(model.mig_profiles[inst.profile]);
          if (inst.pod < 0 && s >= 0) ++gpu_free[s];
        }
        if (state.Idle(g)) {
          const auto& list = geometries_[node.model];
          int best = -1, best_supply = 0;
          for (int i = 0; i < static_cast<int>(list.size()); ++i) {
            int supply = 0;
            for (int s = 0; s < kMigShapeCount; ++s) supply += std::min(list[i].shapes[s], trial[s]);
            if (supply > best_supply) {
              best = i;
              best_supply = supply;
            }
          }
          if (best >= 0 && list[best].shapes != gpu_free) {
            changes.push_back(ChurnRelayout{g, list[best].layout, per_instance_});
            gpu_free = list[best].shapes;
            for (int s = 0; s < kMigShapeCount; ++s) trial[s] -= std::min(trial[s], list[best].shapes[s]);
          }
        } else if (per_instance_) {
          // nos's planner: among the allowed geometries keeping every used
          // device (by count), the one supplying most lacking profiles.
          std::array<int, kMigShapeCount> used = {};
          for (const ChurnInstance& inst : state.gpus()[g].instances) {
            const int s = ProfileShape(model.mig_profiles[inst.profile]);
            if (inst.pod >= 0 && s >= 0) ++used[s];
          }
          const auto& list = geometries_[node.model];
          int best = -1, best_supply = 0;
          for (int i = 0; i < static_cast<int>(list.size()); ++i) {
            int supply = 0;
            bool keeps = true;
            for (int s = 0; s < kMigShapeCount; ++s) {
              keeps &= list[i].shapes[s] >= used[s];
              supply += std::min(list[i].shapes[s] - used[s], trial[s]);
            }
            if (keeps && supply > best_supply) {
              best = i;
              best_supply = supply;
            }
          }
          std::array<int, kMigShapeCount> wanted_free = {};
          if (best >= 0) {
            for (int s = 0; s < kMigShapeCount; ++s) wanted_free[s] = list[best].shapes[s] - used[s];
          }
          if (best >= 0 && wanted_free != gpu_free) {
            ChurnRelayout change{g, CreateBeside(state, g, wanted_free), true};
            // What NVML really placed: a planned count may not fit beside the running instances.
            gpu_free = {};
            for (const MigInstance& inst : change.layout) {
              const int s = ProfileShape(model.mig_profiles[inst.profile]);
              if (s >= 0) ++gpu_free[s];
            }
            for (int s = 0; s < kMigShapeCount; ++s) gpu_free[s] -= used[s];
            for (int s = 0; s < kMigShapeCount; ++s) trial[s] -= std::min(trial[s], gpu_free[s]);
            changes.push_back(std::move(change));
          }
        }
        for (int s = 0; s < kMigShapeCount; ++s) node_free[s] += gpu_free[s];
        if (gpu_free[k7g] > 0) ++free_7g_gpus;
      }
      if (changes.empty()) continue;
      // Simulate the pending pods on the forked node; commit if one fits.
      int fits = 0;
      std::vector<const ChurnPod*> rest;
      for (const ChurnPod* p : pending) {
        bool fit = false;
        if (state.ModelAllowed(*p, node.model)) {
          if (p->gpus == 1 && node_free[p->shape] > 0) {
            --node_free[p->shape];
            if (p->shape == k7g) --free_7g_gpus;
            fit = true;
          } else if (p->gpus > 1 && free_7g_gpus >= p->gpus) {
            free_7g_gpus -= p->gpus;
            node_free[k7g] -= p->gpus;
            fit = true;
          }
        }
        if (fit) {
          ++fits;
        } else {
          rest.push_back(p);
        }
      }
      if (fits == 0) continue;
      lacking = trial;
      pending = std::move(rest);
      out.insert(out.end(), changes.begin(), changes.end());
    }
    return out;
  }

  // mig-agent's apply on a GPU that runs pods: free devices deleted, the
  // spec's free ones created through NVML without an explicit placement
  // (modelled as the first free legal start, largest first); one that finds
  // no room is not created (nos plans on counts, not positions).
  static MigLayout CreateBeside(const ChurnState& state, int g, const std::array<int, kMigShapeCount>& free) {
    const int model = state.gpus()[g].model;
    const GpuModel& m = *state.cluster().models[model];
    MigLayout layout;
    for (const ChurnInstance& inst : state.gpus()[g].instances) {
      if (inst.pod >= 0) layout.push_back(MigInstance{inst.profile, inst.start});
    }
    for (int s : {k7g, k4g, k3g, k2g, k1gDoubleMemory, k1g}) {
      const int p = state.ProfileOf(model, s);
      for (int k = 0; p >= 0 && k < free[s]; ++k) {
        const std::vector<int> starts = FreePlacements(m, layout, p);
        if (starts.empty()) break;
        layout.push_back(MigInstance{p, starts.front()});
      }
    }
    return layout;
  }

  double t_gi_s_ = 0, t_dp_s_ = 0;
  bool per_instance_ = false;
  std::vector<std::vector<Geometry>> geometries_;  // per model
  std::optional<double> open_, wake_;
  double last_new_ = 0;
  std::size_t last_waiting_ = 0;
};

// --- B1 the fluid bound ---

class FluidBound : public ChurnPolicy {
 public:
  std::string name() const override { return "bound-fluid"; }
  std::optional<ChurnDecision> Place(const ChurnState& state, const ChurnPod& pod, bool /*may_relayout*/) override {
    if (capacity_compute_ == 0) {
      capacity_compute_ = 7.0 * static_cast<double>(state.gpus().size());
      capacity_memory_ = 8.0 * static_cast<double>(state.gpus().size());
    }
    const double c = pod.ComputeSlices(), m = kShapeMemory[pod.shape] * pod.gpus;
    if (used_compute_ + c > capacity_compute_ || used_memory_ + m > capacity_memory_) return std::nullopt;
    used_compute_ += c;
    used_memory_ += m;
    return ChurnDecision{};
  }
  void OnDepart(const ChurnPod& pod) override {
    used_compute_ -= pod.ComputeSlices();
    used_memory_ -= kShapeMemory[pod.shape] * pod.gpus;
  }

 private:
  double capacity_compute_ = 0, capacity_memory_ = 0, used_compute_ = 0, used_memory_ = 0;
};

}  // namespace

std::unique_ptr<ChurnPolicy> MakeStaticPolicy(const std::array<double, kMigShapeCount>& shares) {
  return std::make_unique<StaticPolicy>(shares);
}
std::unique_ptr<ChurnPolicy> MakeHamiTemplatesPolicy(double t_gi_s) {
  return std::make_unique<HamiTemplatesPolicy>(t_gi_s);
}
std::unique_ptr<ChurnPolicy> MakeNosPolicy(double t_gi_s, double t_dp_s, bool per_instance) {
  return std::make_unique<NosPolicy>(t_gi_s, t_dp_s, per_instance);
}
std::unique_ptr<ChurnPolicy> MakeFluidBound() { return std::make_unique<FluidBound>(); }

}  // namespace septa::gpu
