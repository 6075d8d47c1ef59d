#include "gpu/planner.h"

#include <algorithm>
#include <optional>
#include <unordered_map>

namespace septa::gpu {
namespace {

std::vector<int> CountsOf(const GpuModel& model, const MigLayout& layout) {
  std::vector<int> counts(model.mig_profiles.size(), 0);
  for (const MigInstance& inst : layout) ++counts[inst.profile];
  return counts;
}

bool Touchable(const PlannerGpu& gpu) {
  return gpu.may_drain || std::none_of(gpu.running.begin(), gpu.running.end(), [](bool r) { return r; });
}

// Serves what it can of `remaining` with `counts`; returns the slices stranded on this GPU.
int Serve(const GpuModel& model, const std::vector<int>& counts, std::vector<int>& remaining) {
  int used = 0;
  int served = 0;
  for (std::size_t p = 0; p < counts.size(); ++p) {
    const int s = std::min(counts[p], remaining[p]);
    remaining[p] -= s;
    served += s;
    used += s * model.mig_profiles[p].memory_slices;
  }
  return served > 0 ? model.memory_slices - used : 0;
}

int UnmetSlices(const GpuModel& model, const std::vector<int>& remaining) {
  int unmet = 0;
  for (std::size_t p = 0; p < remaining.size(); ++p) unmet += remaining[p] * model.mig_profiles[p].memory_slices;
  return unmet;
}

void EnumerateCounts(const GpuModel& model, const std::vector<int>& limit, std::vector<int>& counts, std::size_t p,
                     std::vector<std::vector<int>>& out) {
  if (p == counts.size()) {
    if (PlaceCounts(model, counts).ok()) out.push_back(counts);
    return;
  }
  const int most = std::min(limit[p], model.mig_profiles[p].max_count);
  for (int c = 0; c <= most; ++c) {
    counts[p] = c;
    // Prune: a prefix that already does not fit cannot fit with more instances.
    if (c > 0 && !PlaceCounts(model, counts).ok()) break;
    EnumerateCounts(model, limit, counts, p + 1, out);
  }
  counts[p] = 0;
}

class Planner {
 public:
  Planner(const GpuModel& model, const std::vector<int>& demand, const std::vector<PlannerGpu>& gpus)
      : model_(model), demand_(demand), gpus_(gpus), options_(PlaceableCounts(model, demand)), memo_(gpus.size()) {
    for (const PlannerGpu& g : gpus_) current_.push_back(CountsOf(model_, g.current));
  }

  // Best cost from GPU i on with `remaining` demand; records the choice.
  PlanCost Solve(std::size_t i, std::vector<int>& remaining) {
    if (i == gpus_.size()) return PlanCost{UnmetSlices(model_, remaining), 0, 0};
    const std::uint64_t key = Encode(remaining);
    if (auto it = memo_[i].find(key); it != memo_[i].end()) return it->second.first;
    std::optional<PlanCost> best;
    int best_choice = -1;  // -1 keeps the current layout
    auto consider = [&](const std::vector<int>& counts, int choice, int reconfigure) {
      std::vector<int> rest = remaining;
      const int stranded = Serve(model_, counts, rest);
      PlanCost cost = Solve(i + 1, rest);
      cost.stranded_slices += stranded;
      cost.reconfigured_gpus += reconfigure;
      if (!best || cost < *best) {
        best = cost;
        best_choice = choice;
      }
    };
    consider(current_[i], -1, 0);
    if (Touchable(gpus_[i])) {
      for (std::size_t o = 0; o < options_.size(); ++o) {
        const std::vector<int>& counts = options_[o];
        if (counts == current_[i]) continue;  // the same as keeping it
        bool useful = true;                   // more than remains is never better than exactly that
        for (std::size_t p = 0; p < counts.size(); ++p) useful &= counts[p] <= remaining[p];
        if (useful) consider(counts, static_cast<int>(o), 1);
      }
    }
    memo_[i].emplace(key, std::make_pair(*best, best_choice));
    return *best;
  }

  MigPlan Extract() {
    MigPlan plan;
    std::vector<int> remaining = demand_;
    plan.cost = Solve(0, remaining);
    for (std::size_t i = 0; i < gpus_.size(); ++i) {
      const int choice = memo_[i].at(Encode(remaining)).second;
      GpuTarget target{gpus_[i].node, gpus_[i].index, {}, choice >= 0};
      const std::vector<int>& counts = choice >= 0 ? options_[choice] : current_[i];
      target.layout =
          choice >= 0 ? std::move(PlaceCounts(model_, counts)).value() : CreationOrder(model_, gpus_[i].current);
      Serve(model_, counts, remaining);
      plan.gpus.push_back(std::move(target));
    }
    plan.unmet = remaining;
    return plan;
  }

 private:
  std::uint64_t Encode(const std::vector<int>& remaining) const {
    std::uint64_t key = 0;
    for (std::size_t p = 0; p < remaining.size(); ++p)
      key = key * static_cast<std::uint64_t>(demand_[p] + 1) + remaining[p];
    return key;
  }

  const GpuModel& model_;
  std::vector<int> demand_;
  const std::vector<PlannerGpu>& gpus_;
  std::vector<std::vector<int>> options_;
  std::vector<std::vector<int>> current_;
  std::vector<std::unordered_map<std::uint64_t, std::pair<PlanCost, int>>> memo_;
};

void Render(const GpuModel& model, MigPlan& plan) {
  for (const GpuTarget& t : plan.gpus) {
    const std::string name = "septa-" + t.node;
    plan.node_mig_config[t.node] = name;
    AddGpuLayout(plan.config.configs[name], model, t.index, t.layout);
  }
}

}  // namespace

std::vector<std::vector<int>> PlaceableCounts(const GpuModel& model, const std::vector<int>& demand) {
  std::vector<int> limit = demand;
  limit.resize(model.mig_profiles.size(), 0);
  std::vector<int> counts(model.mig_profiles.size(), 0);
  std::vector<std::vector<int>> out;
  EnumerateCounts(model, limit, counts, 0, out);
  return out;
}

PlanCost CostOfCounts(const GpuModel& model, const std::vector<int>& demand, const std::vector<PlannerGpu>& gpus,
                      const std::vector<std::vector<int>>& counts_per_gpu, const std::vector<bool>& keep_current) {
  std::vector<int> remaining = demand;
  remaining.resize(model.mig_profiles.size(), 0);
  PlanCost cost;
  for (std::size_t i = 0; i < gpus.size(); ++i) {
    const std::vector<int> current = CountsOf(model, gpus[i].current);
    const std::vector<int>& counts = keep_current[i] ? current : counts_per_gpu[i];
    cost.stranded_slices += Serve(model, counts, remaining);
    cost.reconfigured_gpus += keep_current[i] || counts == current ? 0 : 1;
  }
  cost.unmet_slices = UnmetSlices(model, remaining);
  return cost;
}

Result<MigPlan> PlanMigLayouts(const GpuModel& model, const std::vector<int>& demand_in,
                               const std::vector<PlannerGpu>& gpus, const MigPlanOptions& options) {
  if (!model.mig_capable) return InvalidArgument(model.name + " is not MIG-capable");
  if (demand_in.size() > model.mig_profiles.size()) return InvalidField("demand", "more entries than profiles");
  std::vector<int> demand = demand_in;
  demand.resize(model.mig_profiles.size(), 0);
  for (int d : demand) {
    if (d < 0) return InvalidField("demand", "counts must not be negative");
  }
  for (const PlannerGpu& g : gpus) {
    const Status valid = ValidateLayout(model, g.current);
    if (!valid.ok())
      return InvalidField("gpus[" + g.node + "/" + std::to_string(g.index) + "].current", valid.message());
    if (g.running.size() > g.current.size()) {
      return InvalidField("gpus[" + g.node + "/" + std::to_string(g.index) + "].running", "more flags than instances");
    }
  }
  Planner planner(model, demand, gpus);
  MigPlan plan = planner.Extract();
  if (options.fill_free_slices) {
    for (std::size_t i = 0; i < plan.gpus.size(); ++i) {
      GpuTarget& t = plan.gpus[i];
      if (!t.reconfigure) continue;
      t.layout = FillWithSubGpuInstances(model, std::move(t.layout));
      // Filled, it may be the layout the GPU has: then there is nothing to do.
      if (CountsOf(model, t.layout) == CountsOf(model, gpus[i].current)) {
        t.layout = CreationOrder(model, gpus[i].current);
        t.reconfigure = false;
      }
    }
  }
  Render(model, plan);
  return plan;
}

}  // namespace septa::gpu
