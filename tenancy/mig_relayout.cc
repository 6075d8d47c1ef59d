#include "tenancy/mig_relayout.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>

#include "common/fnv.h"
#include "gpu/planner.h"

namespace septa::tenancy {
namespace {

using gpu::AllocationKind;
using gpu::GpuModel;

// What the engine holds that bears on re-layouts: per (node, GPU) the MIG
// instances held, and the nodes that hold whole GPUs or are held whole
// (isolated capacity does not go there).
struct Holdings {
  std::map<std::pair<int, int>, std::uint32_t> mig_held;
  std::set<int> closed_nodes;
};

Holdings HoldingsOf(const gpu::PlacementEngine& engine) {
  Holdings h;
  for (const auto& [id, a] : engine.allocations()) {
    if (a.kind == AllocationKind::kMigSlice) {
      h.mig_held[{a.node, a.gpus[0]}] |= 1u << a.mig_instance;
    } else if (a.kind == AllocationKind::kWholeGpus || a.kind == AllocationKind::kExclusiveNode) {
      h.closed_nodes.insert(a.node);
    }
  }
  return h;
}

std::vector<int> CountsOf(const GpuModel& model, const gpu::MigLayout& layout) {
  std::vector<int> counts(model.mig_profiles.size(), 0);
  for (const gpu::MigInstance& inst : layout) ++counts[inst.profile];
  return counts;
}

// One model's share of a plan: the request entries it serves.
struct ModelPlan {
  bool meets = false;
  std::vector<MigLayoutTarget> targets;
  std::map<std::size_t, int> more_free;  // entry -> instances of its profile added
};

Result<ModelPlan> PlanModel(const gpu::PlacementEngine& engine, const Holdings& holdings, const GpuModel& model,
                            const Capacity& capacity, const std::vector<std::size_t>& entries) {
  std::vector<int> demand(model.mig_profiles.size(), 0);
  for (std::size_t e : entries) {
    const int profile = model.ProfileIndex(capacity.mig[e].profile);
    if (profile < 0) return ModelPlan{};  // the model cannot serve the entry
    demand[profile] += capacity.mig[e].count;
  }
  std::vector<gpu::PlannerGpu> gpus;
  const auto& nodes = engine.nodes();
  for (std::size_t n = 0; n < nodes.size(); ++n) {
    if (nodes[n].health != gpu::NodeHealth::kReady || holdings.closed_nodes.count(static_cast<int>(n))) continue;
    for (std::size_t g = 0; g < nodes[n].gpus.size(); ++g) {
      const gpu::InventoryGpu& gpu = nodes[n].gpus[g];
      if (gpu.model != model.name || !gpu.mig_enabled) continue;
      gpu::PlannerGpu in{nodes[n].name, gpu.index, gpu.mig_layout, {}, false};
      auto held = holdings.mig_held.find({static_cast<int>(n), static_cast<int>(g)});
      for (std::size_t i = 0; i < gpu.mig_layout.size(); ++i) {
        const bool running = held != holdings.mig_held.end() && ((held->second >> i) & 1u);
        in.running.push_back(running);
        if (running) ++demand[gpu.mig_layout[i].profile];  // what is held is demanded still
      }
      gpus.push_back(std::move(in));
    }
  }
  auto plan = gpu::PlanMigLayouts(model, demand, gpus, gpu::MigPlanOptions{.fill_free_slices = true});
  SEPTA_RETURN_IF_ERROR(plan);
  ModelPlan out;
  out.meets = std::all_of(plan->unmet.begin(), plan->unmet.end(), [](int u) { return u == 0; });
  for (std::size_t k = 0; k < plan->gpus.size(); ++k) {
    const gpu::GpuTarget& t = plan->gpus[k];
    if (!t.reconfigure) continue;
    const std::vector<int> before = CountsOf(model, gpus[k].current), after = CountsOf(model, t.layout);
    for (std::size_t e : entries) {
      const int profile = model.ProfileIndex(capacity.mig[e].profile);
      out.more_free[e] += std::max(0, after[profile] - before[profile]);
    }
    out.targets.push_back({t.node, t.index, t.layout, "", {}});
  }
  return out;
}

// The MIG models of the inventory, in catalog order.
std::vector<const GpuModel*> InventoryMigModels(const gpu::PlacementEngine& engine, const gpu::Catalog& catalog) {
  std::set<std::string> present;
  for (const auto& node : engine.nodes()) {
    for (const auto& gpu : node.gpus) {
      if (gpu.mig_enabled) present.insert(gpu.model);
    }
  }
  std::vector<const GpuModel*> out;
  for (const GpuModel& m : catalog.models()) {
    if (present.count(m.name)) out.push_back(&m);
  }
  return out;
}

// "2 and 5", "1, 2 and 5"
std::string JoinAnd(const std::vector<std::string>& items) {
  std::string out;
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += i + 1 == items.size() ? " and " : ", ";
    out += items[i];
  }
  return out;
}

}  // namespace

std::string DescribeTargets(const std::vector<MigLayoutTarget>& targets) {
  std::map<std::string, std::vector<std::string>> by_node;
  for (const MigLayoutTarget& t : targets) by_node[t.node].push_back(std::to_string(t.gpu));
  std::string out;
  for (const auto& [node, gpus] : by_node) {
    if (!out.empty()) out += ", ";
    out += node + " GPU " + JoinAnd(gpus);
  }
  return out;
}

namespace {

// The entry index of a "capacity.mig[i]" field, or -1.
int MigEntryOf(const std::string& field) {
  int entry = -1;
  char close = 0;
  if (std::sscanf(field.c_str(), "capacity.mig[%d%c", &entry, &close) != 2 || close != ']') return -1;
  return entry;
}

}  // namespace

Result<MigRelayout> PlanMigRelayout(const gpu::PlacementEngine& engine, const gpu::Catalog& catalog,
                                    const Capacity& capacity) {
  MigRelayout best;
  best.more_free.assign(capacity.mig.size(), 0);
  if (capacity.tier != gpu::Tier::kIsolated) return best;
  const Holdings holdings = HoldingsOf(engine);
  // Entries naming a model are planned on it; those naming none go together
  // onto one model, each MIG model of the inventory tried in turn.
  std::map<std::string, std::vector<std::size_t>> named;
  std::vector<std::size_t> unnamed;
  for (std::size_t e = 0; e < capacity.mig.size(); ++e) {
    if (capacity.mig[e].model.empty()) {
      unnamed.push_back(e);
    } else {
      named[capacity.mig[e].model].push_back(e);
    }
  }
  std::vector<const GpuModel*> choices = {nullptr};
  if (!unnamed.empty()) choices = InventoryMigModels(engine, catalog);
  bool have_best = false;
  auto more_total = [](const MigRelayout& r) {
    int sum = 0;
    for (int m : r.more_free) sum += m;
    return sum;
  };
  for (const GpuModel* choice : choices) {
    std::map<std::string, std::vector<std::size_t>> groups = named;
    if (choice != nullptr) {
      auto& group = groups[choice->name];
      group.insert(group.end(), unnamed.begin(), unnamed.end());
    }
    MigRelayout candidate;
    candidate.meets = true;
    candidate.more_free.assign(capacity.mig.size(), 0);
    for (const auto& [model_name, entries] : groups) {
      const GpuModel* model = catalog.Find(model_name);
      if (model == nullptr || !model->mig_capable) {
        candidate.meets = false;
        continue;
      }
      auto plan = PlanModel(engine, holdings, *model, capacity, entries);
      SEPTA_RETURN_IF_ERROR(plan);
      candidate.meets = candidate.meets && plan->meets;
      candidate.targets.insert(candidate.targets.end(), plan->targets.begin(), plan->targets.end());
      for (const auto& [e, more] : plan->more_free) candidate.more_free[e] = more;
    }
    const bool better =
        !have_best || (candidate.meets && !best.meets) ||
        (candidate.meets == best.meets &&
         (candidate.meets ? candidate.targets.size() < best.targets.size() : more_total(candidate) > more_total(best)));
    if (better) {
      best = std::move(candidate);
      have_best = true;
    }
  }
  if (best.targets.empty()) best.meets = false;  // nothing to re-lay out cannot help a refused request
  return best;
}

Status WithRelayoutHint(const Status& shortfall, const MigRelayout& relayout) {
  if (relayout.targets.empty()) return shortfall;
  std::vector<FieldViolation> violations = shortfall.violations();
  std::string message = shortfall.message();
  for (FieldViolation& v : violations) {
    const int entry = MigEntryOf(v.field);
    if (entry < 0 || entry >= static_cast<int>(relayout.more_free.size()) || relayout.more_free[entry] == 0) continue;
    const std::string hint = "; " + std::to_string(relayout.more_free[entry]) +
                             " more would be free after re-laying out " + DescribeTargets(relayout.targets) +
                             ", which run nothing";
    const std::string said = v.field + ": " + v.description;
    if (auto at = message.find(said); at != std::string::npos) message.insert(at + said.size(), hint);
    v.description += hint;
  }
  return Status(shortfall.code(), message, std::move(violations));
}

Condition CapacityReadyCondition(const std::vector<MigLayoutTarget>& relayout, std::int64_t generation) {
  if (relayout.empty()) {
    return {kCapacityReady, ConditionStatus::kTrue, "CapacityReserved", "the capacity is reserved on concrete GPUs", {},
            generation};
  }
  return {kCapacityReady,
          ConditionStatus::kFalse,
          "MigRelayout",
          "the capacity is reserved; re-laying out MIG on " + DescribeTargets(relayout),
          {},
          generation};
}

std::vector<gpu::InventoryNode> WithLayoutTargets(std::vector<gpu::InventoryNode> nodes,
                                                  const std::vector<MigLayoutTarget>& targets) {
  std::map<std::pair<std::string, int>, const MigLayoutTarget*> by_gpu;
  for (const MigLayoutTarget& t : targets) by_gpu[{t.node, t.gpu}] = &t;
  for (gpu::InventoryNode& node : nodes) {
    for (gpu::InventoryGpu& g : node.gpus) {
      auto it = by_gpu.find({node.name, g.index});
      if (it == by_gpu.end()) continue;
      g.mig_enabled = true;
      g.mig_layout = it->second->layout;
      g.mig_gi_ids.clear();  // the driver numbers the target's instances when it creates them
    }
  }
  return nodes;
}

Result<std::vector<gpu::MigDeviceGroup>> NodeMigConfig(const gpu::Catalog& catalog, const gpu::InventoryNode& node,
                                                       const std::vector<MigLayoutTarget>& targets) {
  const std::vector<gpu::InventoryNode> applied = WithLayoutTargets({node}, targets);
  std::vector<gpu::MigDeviceGroup> groups;
  for (const gpu::InventoryGpu& g : applied[0].gpus) {
    if (!g.mig_enabled) continue;  // a GPU that no group applies to keeps MIG off
    const GpuModel* model = catalog.Find(g.model);
    if (model == nullptr) return InvalidArgument("node " + node.name + ": unknown GPU model \"" + g.model + "\"");
    gpu::AddGpuLayout(groups, *model, g.index, gpu::CreationOrder(*model, g.mig_layout));
  }
  return groups;
}

std::string MigConfigName(const std::string& node, const std::vector<gpu::MigDeviceGroup>& groups,
                          TimePoint requested_at) {
  gpu::MigPartedConfig config;
  config.configs[node] = groups;
  const auto micros = std::chrono::duration_cast<std::chrono::microseconds>(requested_at.time_since_epoch()).count();
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx",
                static_cast<unsigned long long>(Fnv1a64(gpu::RenderMigParted(config) + std::to_string(micros))));
  return std::string("septa-") + hex;
}

bool LayoutTargetsReached(const gpu::InventoryNode& node, const std::vector<MigLayoutTarget>& targets) {
  for (const MigLayoutTarget& t : targets) {
    auto g = std::find_if(node.gpus.begin(), node.gpus.end(), [&](const auto& x) { return x.index == t.gpu; });
    if (g == node.gpus.end() || !g->mig_enabled) return false;
    gpu::MigLayout observed = g->mig_layout, wanted = t.layout;
    std::sort(observed.begin(), observed.end());
    std::sort(wanted.begin(), wanted.end());
    if (observed != wanted) return false;
  }
  return true;
}

}  // namespace septa::tenancy
