// The per-instance (R-GI) baselines of the MIG churn benchmark (MIG-BENCH §2):
// HAMi v2.10's dynamic MIG (P2) and the NVIDIA DRA driver's DynamicMIG (P4).
// Both create one GPU instance per pod when it is bound and destroy it when
// the pod ends, so a GPU holds its running pods' instances and nothing else;
// neither touches a running instance. docs/placement.md cites the code read
// and lists where the policies depart from it.
#include <algorithm>
#include <array>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "gpu/mig_churn.h"

namespace septa::gpu {
namespace {

// What the running pods of a GPU hold: their instances' memory slices and,
// for HAMi's scores, their count, cores and memory.
struct DynamicGpuUse {
  std::uint32_t mask = 0;
  int instances = 0;
  int cores = 0;  // HAMi: Σ of the profiles' `core` (percent of the GPU's multiprocessors)
  int memory_mib = 0;
};

// A profile a policy may create, with its placements in the order it tries them.
struct DynamicProfile {
  int profile = -1;
  int memory_mib = 0;
  int compute = 0;
  std::vector<std::pair<int, std::uint32_t>> placements;  // (start, memory-slice mask)
};

// One instance to create for the pod.
struct DynamicPick {
  int gpu = 0;
  int profile = 0;
  int start = 0;
};

// The GPU's used instances as a layout, in their current order.
MigLayout DynamicUsedLayout(const ChurnGpu& gpu) {
  MigLayout layout;
  layout.reserve(gpu.instances.size() + 1);
  for (const ChurnInstance& inst : gpu.instances) {
    if (inst.pod >= 0) layout.push_back(MigInstance{inst.profile, inst.start});
  }
  return layout;
}

// What both policies share: no instance at time 0 (MIG mode on, nothing
// created), a created instance running its pod after t_gi, no device-plugin
// restart, and the decision that creates the pod's instances.
class DynamicMigPolicy : public ChurnPolicy {
 public:
  explicit DynamicMigPolicy(double t_gi_s) : t_gi_s_(t_gi_s) {}
  MigLayout InitialLayout(const ChurnState& /*state*/, int /*gpu*/) override { return {}; }
  RelayoutCost Cost() const override { return {0, 0, t_gi_s_}; }
  bool DestroysFreedInstances() const override { return true; }

 protected:
  // Each picked GPU is changed to its used instances plus the new one (the
  // pod's slot); the simulator destroys an instance when its pod ends.
  static ChurnDecision Build(const ChurnState& state, const std::vector<DynamicPick>& picks) {
    ChurnDecision d;
    const auto& gpus = state.gpus();
    for (const DynamicPick& p : picks) {
      MigLayout layout = DynamicUsedLayout(gpus[p.gpu]);
      layout.push_back(MigInstance{p.profile, p.start});
      d.slots.push_back(ChurnSlot{p.gpu, static_cast<int>(layout.size()) - 1});
      d.relayouts.push_back(ChurnRelayout{p.gpu, std::move(layout), true});
    }
    return d;
  }

  static DynamicGpuUse UseOf(const ChurnState& state, int gpu, const std::vector<int>& cores) {
    DynamicGpuUse use;
    const ChurnGpu& g = state.gpus()[gpu];
    if (g.used_instances == 0) return use;
    const GpuModel& model = *state.cluster().models[g.model];
    for (const ChurnInstance& inst : g.instances) {
      if (inst.pod < 0) continue;
      const MigProfile& prof = model.mig_profiles[inst.profile];
      use.mask |= SliceMask(prof, inst.start);
      ++use.instances;
      use.cores += cores.empty() ? 0 : cores[inst.profile];
      use.memory_mib += prof.memory_mib;
    }
    return use;
  }

 private:
  double t_gi_s_ = 0;
};

// --- P2 HAMi v2.10 dynamic MIG ---
//
// The scheduler extender (pkg/scheduler) keeps the node whose devices fit the
// pod with the highest ComputeDefaultScore (nodeSchedulerPolicy binpack);
// inside it, Fit (pkg/device/nvidia/device.go) walks the devices from the end
// of a list sorted by descending device score (gpuSchedulerPolicy spread): the
// least used GPU first, ties to the higher index. On each GPU
// selectMigCandidate takes the smallest-memory allowlisted profile with at
// least the requested memory (ties: fewer slices) that has a free placement,
// 1g.* and 3g.* from the highest start down, the others from the lowest up
// (mig_topology.go).
class HamiDynamicPolicy : public DynamicMigPolicy {
 public:
  using DynamicMigPolicy::DynamicMigPolicy;
  std::string name() const override { return "hami-dynamic"; }

  std::optional<ChurnDecision> Place(const ChurnState& state, const ChurnPod& pod, bool /*may_relayout*/) override {
    Prepare(state);
    const auto& nodes = state.nodes();
    const int n_gpus = static_cast<int>(state.gpus().size());
    use_.resize(n_gpus);
    for (int g = 0; g < n_gpus; ++g) use_[g] = UseOf(state, g, models_[state.gpus()[g].model].cores);
    // ComputeDefaultScore over the node's devices, before the pod: used
    // instances / Σ Count + used cores / Σ Totalcore + used memory / Σ Totalmem.
    order_.clear();
    for (int n = 0; n < static_cast<int>(nodes.size()); ++n) {
      if (!state.ModelAllowed(pod, nodes[n].model) || state.ProfileOf(nodes[n].model, pod.shape) < 0) continue;
      const HamiModel& m = models_[nodes[n].model];
      double instances = 0, cores = 0, memory = 0;
      for (int g : nodes[n].gpus) {
        instances += use_[g].instances;
        cores += use_[g].cores;
        memory += use_[g].memory_mib;
      }
      const double k = static_cast<double>(nodes[n].gpus.size());
      order_.emplace_back(-(instances / (k * m.count) + cores / (k * 100.0) + memory / (k * m.total_mib)), n);
    }
    // Binpack: the highest score wins; ties (Go's map order) to the lower index.
    std::sort(order_.begin(), order_.end());
    std::vector<DynamicPick> picks;
    for (const auto& [score, n] : order_) {
      if (FitNode(state, pod, n, picks)) return Build(state, picks);
    }
    return std::nullopt;
  }

 private:
  struct HamiModel {
    std::vector<DynamicProfile> candidates;  // by memory, then slices
    std::vector<int> cores;                  // per profile index
    int count = 0;                           // a device's Count: the most instances of a profile
    double total_mib = 0;                    // Totalmem
  };

  void Prepare(const ChurnState& state) {
    if (!models_.empty()) return;
    // The chart's default migProfileAllowlist: 1g, 2g, 3g and 7g per model
    // (charts/hami/templates/scheduler/device-configmap.yaml).
    constexpr std::array<int, 4> kAllowed = {k1g, k2g, k3g, k7g};
    for (int mi = 0; mi < static_cast<int>(state.cluster().models.size()); ++mi) {
      const GpuModel& model = *state.cluster().models[mi];
      HamiModel m;
      m.total_mib = model.memory_mib;
      // core = ceil(SMs × 100 / the largest profile's SMs) (register.go discoverMigProfiles).
      int full_sms = 0;
      for (const MigProfile& p : model.mig_profiles) full_sms = std::max(full_sms, p.sms);
      for (const MigProfile& p : model.mig_profiles) {
        m.cores.push_back(full_sms > 0 ? (p.sms * 100 + full_sms - 1) / full_sms : 0);
      }
      for (int shape : kAllowed) {
        const int p = state.ProfileOf(mi, shape);
        if (p < 0) continue;
        const MigProfile& prof = model.mig_profiles[p];
        DynamicProfile c{p, prof.memory_mib, prof.compute_slices, {}};
        std::vector<int> starts = prof.starts;
        const bool high_first = prof.name.rfind("1g.", 0) == 0 || prof.name.rfind("3g.", 0) == 0;
        std::stable_sort(starts.begin(), starts.end(), [&](int a, int b) { return high_first ? a > b : a < b; });
        for (int s : starts) c.placements.emplace_back(s, SliceMask(prof, s));
        m.count = std::max(m.count, prof.max_count);
        m.candidates.push_back(std::move(c));
      }
      std::stable_sort(m.candidates.begin(), m.candidates.end(), [](const DynamicProfile& a, const DynamicProfile& b) {
        return a.memory_mib != b.memory_mib ? a.memory_mib < b.memory_mib : a.compute < b.compute;
      });
      models_.push_back(std::move(m));
    }
  }

  // Fit on one node: `pod.gpus` devices, each with an instance for the request.
  bool FitNode(const ChurnState& state, const ChurnPod& pod, int n, std::vector<DynamicPick>& picks) {
    const ChurnNode& node = state.nodes()[n];
    const HamiModel& m = models_[node.model];
    const GpuModel& model = *state.cluster().models[node.model];
    // The request: the memory of the pod's shape on this model (gpumem).
    const int need_mib = model.mig_profiles[state.ProfileOf(node.model, pod.shape)].memory_mib;
    // Spread: the lowest device score first, ties to the higher index.
    gpu_order_.clear();
    for (int g : node.gpus) {
      const DynamicGpuUse& u = use_[g];
      const double score = static_cast<double>(u.instances) / m.count + u.cores / 100.0 + u.memory_mib / m.total_mib;
      gpu_order_.emplace_back(score, -g);
    }
    std::sort(gpu_order_.begin(), gpu_order_.end());
    picks.clear();
    for (const auto& [score, neg] : gpu_order_) {
      const int g = -neg;
      const DynamicGpuUse& u = use_[g];
      if (!state.Usable(g) || u.instances >= m.count || m.total_mib - u.memory_mib < need_mib) continue;
      for (const DynamicProfile& c : m.candidates) {
        if (c.memory_mib < need_mib) continue;
        auto it = std::find_if(c.placements.begin(), c.placements.end(),
                               [&](const auto& pl) { return (pl.second & u.mask) == 0; });
        if (it == c.placements.end()) continue;
        picks.push_back(DynamicPick{g, c.profile, it->first});
        break;
      }
      if (static_cast<int>(picks.size()) == pod.gpus) return true;
    }
    return false;
  }

  std::vector<HamiModel> models_;
  std::vector<DynamicGpuUse> use_;
  std::vector<std::pair<double, int>> order_;      // (-node score, node)
  std::vector<std::pair<double, int>> gpu_order_;  // (device score, -gpu)
};

// --- P4 NVIDIA DRA driver, DynamicMIG ---
//
// Every (profile, placement) of every GPU is a device of the node's pool,
// listed per GPU by device name (gpu-<minor>-mig-<profile>-<id>-<start>:
// a profile's placements by ascending start); per-GPU shared counters (one
// per memory slice, plus the capacities) forbid overlapping partitions. The
// pod's claim names its exact profile; kube-scheduler's allocator takes the
// first fitting device(s) in that order on the node it scores best
// (NodeResourcesFit LeastAllocated, reduced here to used memory slices).
class DraPolicy : public DynamicMigPolicy {
 public:
  using DynamicMigPolicy::DynamicMigPolicy;
  std::string name() const override { return "dra"; }

  std::optional<ChurnDecision> Place(const ChurnState& state, const ChurnPod& pod, bool /*may_relayout*/) override {
    Prepare(state);
    const auto& nodes = state.nodes();
    order_.clear();
    for (int n = 0; n < static_cast<int>(nodes.size()); ++n) {
      if (!state.ModelAllowed(pod, nodes[n].model) || state.ProfileOf(nodes[n].model, pod.shape) < 0) continue;
      order_.emplace_back(nodes[n].used_memory_slices, n);
    }
    // Least allocated first; ties (kube-scheduler picks one at random) to the lower index.
    std::sort(order_.begin(), order_.end());
    std::vector<DynamicPick> picks;
    for (const auto& [used, n] : order_) {
      const DynamicProfile& c = profiles_[nodes[n].model][pod.shape];
      picks.clear();
      for (int g : nodes[n].gpus) {
        if (!state.Usable(g)) continue;
        const std::uint32_t mask = UseOf(state, g, {}).mask;
        auto it = std::find_if(c.placements.begin(), c.placements.end(),
                               [&](const auto& pl) { return (pl.second & mask) == 0; });
        if (it != c.placements.end()) picks.push_back(DynamicPick{g, c.profile, it->first});
        if (static_cast<int>(picks.size()) == pod.gpus) return Build(state, picks);
      }
    }
    return std::nullopt;
  }

 private:
  void Prepare(const ChurnState& state) {
    if (!profiles_.empty()) return;
    for (int m = 0; m < static_cast<int>(state.cluster().models.size()); ++m) {
      std::array<DynamicProfile, kMigShapeCount> per_shape;
      for (int s = 0; s < kMigShapeCount; ++s) {
        const int p = state.ProfileOf(m, s);
        if (p < 0) continue;
        const MigProfile& prof = state.cluster().models[m]->mig_profiles[p];
        per_shape[s] = DynamicProfile{p, prof.memory_mib, prof.compute_slices, {}};
        std::vector<int> starts = prof.starts;
        std::sort(starts.begin(), starts.end());  // the device names sort a profile's placements by start
        for (int start : starts) per_shape[s].placements.emplace_back(start, SliceMask(prof, start));
      }
      profiles_.push_back(std::move(per_shape));
    }
  }

  std::vector<std::array<DynamicProfile, kMigShapeCount>> profiles_;  // [model][shape]: the exact profile
  std::vector<std::pair<int, int>> order_;                            // (used memory slices, node)
};

}  // namespace

std::unique_ptr<ChurnPolicy> MakeHamiDynamicPolicy(double t_gi_s) {
  return std::make_unique<HamiDynamicPolicy>(t_gi_s);
}
std::unique_ptr<ChurnPolicy> MakeDraPolicy(double t_gi_s) { return std::make_unique<DraPolicy>(t_gi_s); }

}  // namespace septa::gpu
