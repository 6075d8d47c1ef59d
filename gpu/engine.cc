#include "gpu/engine.h"

#include <algorithm>
#include <array>
#include <bit>
#include <tuple>

namespace septa::gpu {
namespace {

constexpr std::array<const char*, 8> kConstraints = {"health", "taint", "tier", "model", "cpu", "memory", "gpu", "mig"};

bool Tolerates(const std::vector<Taint>& tolerations, const Taint& taint) {
  if (taint.effect == "PreferNoSchedule") return true;
  return std::any_of(tolerations.begin(), tolerations.end(),
                     [&](const Taint& t) { return t.key == taint.key && (t.value.empty() || t.value == taint.value); });
}

Status CheckRequestShape(const PlacementRequest& r) {
  if (r.tenant.empty()) return InvalidField("tenant", "is required");
  if (r.cpu_milli < 0) return InvalidField("cpu_milli", "must not be negative");
  if (r.memory_mib < 0) return InvalidField("memory_mib", "must not be negative");
  switch (r.tier) {
    case Tier::kShared:
      if (r.gpu_count != 1) return InvalidField("gpu_count", "a shared fraction is on one GPU");
      if (r.milli_gpu <= 0 || r.milli_gpu > kMilliPerGpu) return InvalidField("milli_gpu", "must be in 1..1000");
      if (!r.mig_profile.empty()) return InvalidField("mig_profile", "the shared tier gets no MIG slice");
      return Status::Ok();
    case Tier::kIsolated:
      if (r.mig_profile.empty()) return InvalidField("mig_profile", "the isolated tier gets only MIG slices");
      if (r.gpu_count != 1) return InvalidField("gpu_count", "one MIG instance per request");
      return Status::Ok();
    case Tier::kDedicated:
      if (r.gpu_count < 1 || r.gpu_count > kMaxGpusPerNode) return InvalidField("gpu_count", "must be in 1..8");
      if (r.milli_gpu != kMilliPerGpu) return InvalidField("milli_gpu", "the dedicated tier gets whole GPUs");
      if (!r.mig_profile.empty()) return InvalidField("mig_profile", "the dedicated tier gets no MIG slice");
      return Status::Ok();
    case Tier::kExclusive:
      if (r.gpu_count < 0 || r.gpu_count > kMaxGpusPerNode) return InvalidField("gpu_count", "must be in 0..8");
      if (!r.mig_profile.empty()) return InvalidField("mig_profile", "the exclusive tier gets whole nodes");
      return Status::Ok();
  }
  return InvalidField("tier", "unknown tier");
}

}  // namespace

std::string_view TierName(Tier tier) {
  switch (tier) {
    case Tier::kShared: return "shared";
    case Tier::kIsolated: return "isolated";
    case Tier::kDedicated: return "dedicated";
    case Tier::kExclusive: return "exclusive";
  }
  return "unknown";
}

std::optional<Tier> TierFromName(std::string_view name) {
  for (const Tier tier : {Tier::kShared, Tier::kIsolated, Tier::kDedicated, Tier::kExclusive}) {
    if (TierName(tier) == name) return tier;
  }
  return std::nullopt;
}

std::string_view NodeHealthName(NodeHealth health) {
  switch (health) {
    case NodeHealth::kReady: return "Ready";
    case NodeHealth::kNotReady: return "NotReady";
    case NodeHealth::kGone: return "Gone";
  }
  return "unknown";
}

std::string_view GpuModeName(GpuMode mode) {
  switch (mode) {
    case GpuMode::kFree: return "free";
    case GpuMode::kWhole: return "whole";
    case GpuMode::kTimeShared: return "time-shared";
    case GpuMode::kMig: return "mig";
  }
  return "unknown";
}

PlacementEngine::PlacementEngine(std::vector<InventoryNode> nodes, const Catalog& catalog)
    : nodes_(std::move(nodes)), catalog_(catalog) {}

Result<std::unique_ptr<PlacementEngine>> PlacementEngine::Create(std::vector<InventoryNode> nodes,
                                                                 const Catalog& catalog, std::string_view policy,
                                                                 const WorkloadModel& workload) {
  std::sort(nodes.begin(), nodes.end(), [](const InventoryNode& a, const InventoryNode& b) { return a.name < b.name; });
  std::unique_ptr<PlacementEngine> e(new PlacementEngine(std::move(nodes), catalog));
  for (ClusterState* view : {&e->shared_view_, &e->whole_view_}) view->nodes.resize(e->nodes_.size());
  for (std::size_t i = 0; i < e->nodes_.size(); ++i) {
    const InventoryNode& node = e->nodes_[i];
    const std::string where = "nodes[" + node.name + "]";
    if (i > 0 && node.name == e->nodes_[i - 1].name) return InvalidField(where, "duplicate node name");
    if (node.gpus.size() > kMaxGpusPerNode) return InvalidField(where + ".gpus", "more than 8 GPUs");
    NodeRuntime rt{node.cpu_milli, node.memory_mib, 0, 0, "", std::vector<GpuState>(node.gpus.size())};
    NodeState cap;
    cap.cpu_free = node.cpu_milli;
    cap.mem_free = node.memory_mib;
    cap.gpu_count = static_cast<std::uint8_t>(node.gpus.size());
    for (std::size_t g = 0; g < node.gpus.size(); ++g) {
      const InventoryGpu& gpu = node.gpus[g];
      const GpuModel* model = catalog.Find(gpu.model);
      if (!model) return InvalidField(where + ".gpus[" + std::to_string(g) + "].model", "unknown model " + gpu.model);
      if (gpu.model != node.gpus[0].model) return InvalidField(where + ".gpus", "a node holds one GPU model");
      if (gpu.mig_enabled) {
        const Status valid = ValidateLayout(*model, gpu.mig_layout);
        if (!valid.ok()) return InvalidField(where + ".gpus[" + std::to_string(g) + "].mig_layout", valid.message());
      }
      cap.gpu_free[g] = kMilliPerGpu;
    }
    if (!node.gpus.empty()) {
      int index = e->shared_view_.ModelIndex(node.gpus[0].model);
      if (index < 0) {
        if (e->shared_view_.model_names.size() == kMaxModels) return InvalidArgument("more than 32 GPU models");
        index = static_cast<int>(e->shared_view_.model_names.size());
        e->shared_view_.model_names.push_back(node.gpus[0].model);
        e->gpu_models_.push_back(catalog.Find(node.gpus[0].model));
      }
      cap.model = static_cast<std::uint8_t>(index);
    }
    for (ClusterState* view : {&e->shared_view_, &e->whole_view_}) {
      view->names.push_back(node.name);
      view->capacity.push_back(cap);
      view->total_gpu_milli += cap.gpu_count * kMilliPerGpu;
    }
    e->state_.push_back(std::move(rt));
  }
  e->whole_view_.model_names = e->shared_view_.model_names;
  for (std::size_t i = 0; i < e->nodes_.size(); ++i) e->RefreshView(static_cast<int>(i));
  e->shared_policy_ = MakePolicy(policy, e->shared_view_, workload, 0);
  e->whole_policy_ = MakePolicy(policy, e->whole_view_, workload, 0);
  if (!e->shared_policy_) return InvalidField("policy", "unknown policy " + std::string(policy));
  return e;
}

GpuMode PlacementEngine::Mode(int node, int gpu) const {
  const GpuState& g = state_[node].gpus[gpu];
  if (nodes_[node].gpus[gpu].mig_enabled) return GpuMode::kMig;
  if (g.fractions > 0) return GpuMode::kTimeShared;
  return g.free_milli == 0 ? GpuMode::kWhole : GpuMode::kFree;
}

void PlacementEngine::RefreshView(int node) {
  const NodeRuntime& rt = state_[node];
  NodeState& shared = shared_view_.nodes[node];
  NodeState& whole = whole_view_.nodes[node];
  shared = whole = shared_view_.capacity[node];
  const bool closed = !rt.exclusive_tenant.empty() || nodes_[node].health != NodeHealth::kReady;
  // A node closed to a kind of allocation gets a CPU no request fits.
  shared.cpu_free = closed || rt.dedicated > 0 ? -1 : rt.cpu_free;
  whole.cpu_free = closed || rt.shared_or_mig > 0 ? -1 : rt.cpu_free;
  shared.mem_free = whole.mem_free = rt.mem_free;
  for (std::size_t g = 0; g < rt.gpus.size(); ++g) {
    const GpuState& s = rt.gpus[g];
    const bool mig = nodes_[node].gpus[g].mig_enabled;
    const bool taken_whole = s.free_milli == 0 && s.fractions == 0;
    shared.gpu_free[g] = static_cast<std::int16_t>(mig || taken_whole ? 0 : s.free_milli);
    whole.gpu_free[g] = static_cast<std::int16_t>(!mig && s.free_milli == kMilliPerGpu ? kMilliPerGpu : 0);
  }
}

const char* PlacementEngine::NodeRejects(int node, const PlacementRequest& r, std::uint32_t model_mask) const {
  const InventoryNode& n = nodes_[node];
  const NodeRuntime& rt = state_[node];
  if (n.health != NodeHealth::kReady) return "health";
  for (const Taint& taint : n.taints) {
    if (!Tolerates(r.tolerations, taint)) return "taint";
  }
  const bool any_allocation = rt.dedicated + rt.shared_or_mig > 0 || !rt.exclusive_tenant.empty();
  if (!rt.exclusive_tenant.empty()) return "tier";
  if ((r.tier == Tier::kShared || r.tier == Tier::kIsolated) && rt.dedicated > 0) return "tier";
  if (r.tier == Tier::kDedicated && rt.shared_or_mig > 0) return "tier";
  if (r.tier == Tier::kExclusive && any_allocation) return "tier";
  const bool wants_gpu = r.tier != Tier::kExclusive || r.gpu_count > 0;
  if (wants_gpu && (n.gpus.empty() || !((model_mask >> shared_view_.capacity[node].model) & 1u))) return "model";
  if (rt.cpu_free < r.cpu_milli) return "cpu";
  if (rt.mem_free < r.memory_mib) return "memory";
  switch (r.tier) {
    case Tier::kShared:
      if (!GpusFit(shared_view_.nodes[node], PodShape{0, 0, 1, static_cast<std::int16_t>(r.milli_gpu)})) return "gpu";
      break;
    case Tier::kDedicated:
      if (whole_view_.nodes[node].FullyFreeGpus() < r.gpu_count) return "gpu";
      break;
    case Tier::kExclusive:
      if (static_cast<int>(n.gpus.size()) < r.gpu_count) return "gpu";
      break;
    case Tier::kIsolated: {
      for (std::size_t g = 0; g < n.gpus.size(); ++g) {
        const InventoryGpu& gpu = n.gpus[g];
        if (!gpu.mig_enabled) continue;
        for (std::size_t i = 0; i < gpu.mig_layout.size(); ++i) {
          const bool free = !((rt.gpus[g].mig_used >> i) & 1u);
          if (free && gpu_models_[shared_view_.capacity[node].model]->mig_profiles[gpu.mig_layout[i].profile].name ==
                          r.mig_profile) {
            return nullptr;
          }
        }
      }
      return "mig";
    }
  }
  return nullptr;
}

Status PlacementEngine::Refuse(const PlacementRequest& r, std::uint32_t model_mask) const {
  std::array<int, kConstraints.size()> counts = {};
  for (int i = 0; i < static_cast<int>(nodes_.size()); ++i) {
    if (const char* c = NodeRejects(i, r, model_mask)) {
      counts[std::find_if(kConstraints.begin(), kConstraints.end(),
                          [&](const char* k) { return std::string_view(k) == c; }) -
             kConstraints.begin()]++;
    }
  }
  std::vector<FieldViolation> violations;
  std::string message = "no node fits the " + std::string(TierName(r.tier)) + " request of tenant " + r.tenant;
  for (std::size_t k = 0; k < kConstraints.size(); ++k) {
    if (counts[k] == 0) continue;
    const std::string nodes = std::to_string(counts[k]) + (counts[k] == 1 ? " node" : " nodes");
    message += (violations.empty() ? ": " : ", ") + std::string(kConstraints[k]) + " on " + nodes;
    violations.push_back({kConstraints[k], nodes});
  }
  return Status(Code::kResourceExhausted, message, std::move(violations));
}

Result<Placement> PlacementEngine::Place(const PlacementRequest& r) {
  SEPTA_RETURN_IF_ERROR(CheckRequestShape(r));
  std::uint32_t model_mask = kAnyModel;
  if (!r.models.empty()) {
    model_mask = 0;
    for (const std::string& model : r.models) {
      if (!catalog_.Find(model)) return InvalidField("models", "unknown GPU model " + model);
      const int index = shared_view_.ModelIndex(model);
      if (index >= 0) model_mask |= 1u << index;
    }
  }
  Allocation a;
  a.tenant = r.tenant;
  a.tier = r.tier;
  a.cpu_milli = r.cpu_milli;
  a.memory_mib = r.memory_mib;
  const int n = static_cast<int>(nodes_.size());

  if (r.tier == Tier::kShared || r.tier == Tier::kDedicated) {
    const bool shared = r.tier == Tier::kShared;
    ClusterState& view = shared ? shared_view_ : whole_view_;
    const PodShape key{r.cpu_milli, r.memory_mib, static_cast<std::int16_t>(r.gpu_count),
                       static_cast<std::int16_t>(r.milli_gpu), model_mask};
    auto [it, added] = shape_ids_.try_emplace(std::tuple{key.cpu_milli, key.mem_mib, static_cast<int>(key.num_gpu),
                                                         static_cast<int>(key.gpu_milli), model_mask},
                                              static_cast<int>(shape_ids_.size()));
    PodShape shape = key;
    shape.shape_id = it->second;
    // Nodes whose taints the request does not tolerate are closed for this decision only.
    std::vector<std::pair<int, int>> closed;
    for (int i = 0; i < n; ++i) {
      for (const Taint& taint : nodes_[i].taints) {
        if (!Tolerates(r.tolerations, taint)) {
          closed.emplace_back(i, view.nodes[i].cpu_free);
          view.nodes[i].cpu_free = -1;
          break;
        }
      }
    }
    const GpuPick pick = (shared ? shared_policy_ : whole_policy_)->Choose(view, shape);
    for (const auto& [i, cpu] : closed) view.nodes[i].cpu_free = cpu;
    if (pick.node < 0) return Refuse(r, model_mask);
    a.kind = shared ? AllocationKind::kFractional : AllocationKind::kWholeGpus;
    a.node = pick.node;
    a.milli_gpu = r.milli_gpu;
    for (int g = 0; g < kMaxGpusPerNode; ++g) {
      if ((pick.gpu_mask >> g) & 1u) a.gpus.push_back(g);
    }
    return Commit(std::move(a));
  }

  if (r.tier == Tier::kExclusive) {
    int best = -1;
    for (int i = 0; i < n; ++i) {
      if (NodeRejects(i, r, model_mask)) continue;
      // The smallest node that will do leaves the big ones for bigger tenants.
      auto size = [&](int k) { return std::tuple(nodes_[k].gpus.size(), nodes_[k].cpu_milli, nodes_[k].memory_mib); };
      if (best < 0 || size(i) < size(best)) best = i;
    }
    if (best < 0) return Refuse(r, model_mask);
    a.kind = AllocationKind::kExclusiveNode;
    a.node = best;
    a.cpu_milli = state_[best].cpu_free;
    a.memory_mib = state_[best].mem_free;
    a.milli_gpu = kMilliPerGpu;
    for (std::size_t g = 0; g < nodes_[best].gpus.size(); ++g) a.gpus.push_back(static_cast<int>(g));
    return Commit(std::move(a));
  }

  // Isolated: a free configured instance of the profile; the fullest MIG GPU
  // first so that empty MIG GPUs stay available for reconfiguration.
  std::tuple<int, int, int, int> best{-1, -1, -1, -1};  // -used slices, node, gpu, instance
  bool found = false;
  for (int i = 0; i < n; ++i) {
    if (NodeRejects(i, r, model_mask)) continue;
    const GpuModel& model = *gpu_models_[shared_view_.capacity[i].model];
    for (std::size_t g = 0; g < nodes_[i].gpus.size(); ++g) {
      const InventoryGpu& gpu = nodes_[i].gpus[g];
      if (!gpu.mig_enabled) continue;
      int used_slices = 0;
      for (std::size_t k = 0; k < gpu.mig_layout.size(); ++k) {
        if ((state_[i].gpus[g].mig_used >> k) & 1u)
          used_slices += model.mig_profiles[gpu.mig_layout[k].profile].memory_slices;
      }
      for (std::size_t k = 0; k < gpu.mig_layout.size(); ++k) {
        if ((state_[i].gpus[g].mig_used >> k) & 1u) continue;
        if (model.mig_profiles[gpu.mig_layout[k].profile].name != r.mig_profile) continue;
        const std::tuple<int, int, int, int> candidate{-used_slices, i, static_cast<int>(g), static_cast<int>(k)};
        if (!found || candidate < best) best = candidate;
        found = true;
      }
    }
  }
  if (!found) return Refuse(r, model_mask);
  const auto [neg_used, node, gpu, instance] = best;
  const InventoryGpu& chosen = nodes_[node].gpus[gpu];
  const MigProfile& profile =
      gpu_models_[shared_view_.capacity[node].model]->mig_profiles[chosen.mig_layout[instance].profile];
  a.kind = AllocationKind::kMigSlice;
  a.node = node;
  a.gpus = {gpu};
  a.mig_instance = instance;
  a.mig_start = chosen.mig_layout[instance].start;
  a.mig_slices = profile.memory_slices;
  a.mig_profile = profile.name;
  return Commit(std::move(a));
}

std::string PlacementEngine::HoldRejects(int node, const RecordedPlacement& r, Allocation& a) const {
  const InventoryNode& n = nodes_[node];
  const NodeRuntime& rt = state_[node];
  if (!rt.exclusive_tenant.empty()) return "the node is held exclusively by tenant " + rt.exclusive_tenant;
  for (int g : r.gpus) {
    if (g < 0 || g >= static_cast<int>(n.gpus.size())) return "the node has no GPU " + std::to_string(g);
  }
  a.tenant = r.tenant;
  a.tier = r.tier;
  a.node = node;
  a.gpus = r.gpus;
  switch (r.tier) {
    case Tier::kShared: {
      if (r.gpus.size() != 1) return "a shared fraction is on one GPU";
      const GpuState& s = rt.gpus[r.gpus[0]];
      if (rt.dedicated > 0) return "the node holds whole GPUs";
      if (n.gpus[r.gpus[0]].mig_enabled) return "the GPU is in MIG mode";
      if (s.free_milli == 0 && s.fractions == 0) return "the GPU is held whole";
      if (r.milli_gpu < 1 || r.milli_gpu > s.free_milli) {
        return std::to_string(r.milli_gpu) + " milli-GPU do not fit in the " + std::to_string(s.free_milli) + " free";
      }
      a.kind = AllocationKind::kFractional;
      a.milli_gpu = r.milli_gpu;
      return "";
    }
    case Tier::kIsolated: {
      if (r.gpus.size() != 1) return "a MIG instance is on one GPU";
      if (rt.dedicated > 0) return "the node holds whole GPUs";
      const InventoryGpu& gpu = n.gpus[r.gpus[0]];
      const GpuModel& model = *gpu_models_[shared_view_.capacity[node].model];
      for (std::size_t k = 0; gpu.mig_enabled && k < gpu.mig_layout.size(); ++k) {
        const MigProfile& profile = model.mig_profiles[gpu.mig_layout[k].profile];
        if (profile.name != r.mig_profile || gpu.mig_layout[k].start != r.mig_start) continue;
        if ((rt.gpus[r.gpus[0]].mig_used >> k) & 1u) return "the MIG instance is held already";
        a.kind = AllocationKind::kMigSlice;
        a.mig_instance = static_cast<int>(k);
        a.mig_start = r.mig_start;
        a.mig_slices = profile.memory_slices;
        a.mig_profile = profile.name;
        return "";
      }
      return "the GPU's layout has no " + r.mig_profile + " instance at slice " + std::to_string(r.mig_start);
    }
    case Tier::kDedicated:
      if (r.gpus.empty()) return "no GPU recorded";
      if (rt.shared_or_mig > 0) return "the node holds fractions or MIG instances";
      for (int g : r.gpus) {
        if (n.gpus[g].mig_enabled) return "GPU " + std::to_string(g) + " is in MIG mode";
        if (rt.gpus[g].free_milli != kMilliPerGpu) return "GPU " + std::to_string(g) + " is held";
      }
      a.kind = AllocationKind::kWholeGpus;
      a.milli_gpu = kMilliPerGpu;
      return "";
    case Tier::kExclusive:
      if (rt.dedicated + rt.shared_or_mig > 0) return "the node holds other allocations";
      a.kind = AllocationKind::kExclusiveNode;
      a.cpu_milli = rt.cpu_free;
      a.memory_mib = rt.mem_free;
      a.milli_gpu = kMilliPerGpu;
      a.gpus.clear();
      for (std::size_t g = 0; g < n.gpus.size(); ++g) a.gpus.push_back(static_cast<int>(g));
      return "";
  }
  return "unknown tier";
}

Result<Placement> PlacementEngine::Hold(const RecordedPlacement& recorded) {
  auto it = std::lower_bound(nodes_.begin(), nodes_.end(), recorded.node,
                             [](const InventoryNode& n, const std::string& name) { return n.name < name; });
  if (it == nodes_.end() || it->name != recorded.node)
    return NotFound("node " + recorded.node + " is not in the inventory");
  Allocation a;
  const std::string why = HoldRejects(static_cast<int>(it - nodes_.begin()), recorded, a);
  if (!why.empty()) {
    return FailedPrecondition("cannot hold the " + std::string(TierName(recorded.tier)) + " placement of tenant " +
                              recorded.tenant + " on " + recorded.node + ": " + why);
  }
  return Commit(std::move(a));
}

Result<Placement> PlacementEngine::Commit(Allocation a) {
  NodeRuntime& rt = state_[a.node];
  rt.cpu_free -= a.cpu_milli;
  rt.mem_free -= a.memory_mib;
  switch (a.kind) {
    case AllocationKind::kFractional:
      rt.gpus[a.gpus[0]].free_milli -= a.milli_gpu;
      ++rt.gpus[a.gpus[0]].fractions;
      ++rt.shared_or_mig;
      break;
    case AllocationKind::kMigSlice:
      rt.gpus[a.gpus[0]].mig_used |= 1u << a.mig_instance;
      ++rt.shared_or_mig;
      break;
    case AllocationKind::kWholeGpus:
      for (int g : a.gpus) rt.gpus[g].free_milli = 0;
      ++rt.dedicated;
      break;
    case AllocationKind::kExclusiveNode:
      for (int g : a.gpus) rt.gpus[g].free_milli = 0;
      rt.exclusive_tenant = a.tenant;
      break;
  }
  RefreshView(a.node);
  shared_policy_->NodeChanged(a.node);
  whole_policy_->NodeChanged(a.node);
  a.id = next_id_++;
  Placement p;
  p.allocation_id = a.id;
  p.node = a.node;
  p.node_name = nodes_[a.node].name;
  p.gpus = a.gpus;
  for (int g : a.gpus) p.gpu_uuids.push_back(nodes_[a.node].gpus[g].uuid);
  p.mig_start = a.mig_start;
  p.mig_slices = a.mig_slices;
  allocations_.emplace(a.id, std::move(a));
  return p;
}

Status PlacementEngine::Release(std::uint64_t allocation_id) {
  auto it = allocations_.find(allocation_id);
  if (it == allocations_.end()) return NotFound("allocation " + std::to_string(allocation_id) + " not found");
  const Allocation& a = it->second;
  NodeRuntime& rt = state_[a.node];
  rt.cpu_free += a.cpu_milli;
  rt.mem_free += a.memory_mib;
  switch (a.kind) {
    case AllocationKind::kFractional:
      rt.gpus[a.gpus[0]].free_milli += a.milli_gpu;
      --rt.gpus[a.gpus[0]].fractions;
      --rt.shared_or_mig;
      break;
    case AllocationKind::kMigSlice:
      rt.gpus[a.gpus[0]].mig_used &= ~(1u << a.mig_instance);
      --rt.shared_or_mig;
      break;
    case AllocationKind::kWholeGpus:
      for (int g : a.gpus) rt.gpus[g].free_milli = kMilliPerGpu;
      --rt.dedicated;
      break;
    case AllocationKind::kExclusiveNode:
      for (int g : a.gpus) rt.gpus[g].free_milli = kMilliPerGpu;
      rt.exclusive_tenant.clear();
      break;
  }
  const int node = a.node;
  allocations_.erase(it);
  RefreshView(node);
  shared_policy_->NodeChanged(node);
  whole_policy_->NodeChanged(node);
  return Status::Ok();
}

}  // namespace septa::gpu
