#include "services/core/inventory_service.h"

#include <algorithm>
#include <map>
#include <tuple>

#include "gpu/catalog.h"
#include "services/base/base64.h"
#include "services/core/free_capacity.h"
#include "services/core/tenant_query.h"
#include "services/core/validation.h"
#include "services/core/virtual_cluster_kind.h"

namespace septa::core {

namespace {

// Node names are DNS-1123 subdomains, which tenant page tokens do not take.
constexpr std::string_view kNodePageTokenKind = "node:";

// What the reservations hold, by where.
struct Holdings {
  std::map<std::string, Holder> nodes;
  std::map<std::pair<std::string, int>, Holder> gpus;
  std::map<std::pair<std::string, int>, std::vector<HeldShare>> shares;
  std::map<std::pair<std::string, int>, std::vector<std::pair<tenancy::ReservedMig, Holder>>> mig;
};

Holdings Index(const std::vector<tenancy::Reservation>& reservations) {
  Holdings h;
  for (const auto& r : reservations) {
    const Holder holder{r.tenant, r.vcluster, r.releasing};
    for (const auto& n : r.nodes) h.nodes[n] = holder;
    for (const auto& g : r.gpus) h.gpus[{g.node, g.gpu}] = holder;
    for (const auto& s : r.shares) h.shares[{s.node, s.gpu}].push_back({holder, s.milli_gpu, s.gpu_memory_mib});
    for (const auto& m : r.mig) h.mig[{m.node, m.gpu}].emplace_back(m, holder);
  }
  return h;
}

HeldGpu Held(const std::string& node, const gpu::InventoryGpu& g, const Holdings& h) {
  HeldGpu out{.gpu = g, .instances = {}, .holder = {}, .shares = {}};
  const std::pair<std::string, int> key{node, g.index};
  const gpu::GpuModel* model = gpu::Catalog::Default().Find(g.model);
  std::vector<std::pair<tenancy::ReservedMig, Holder>> reserved;
  if (auto it = h.mig.find(key); it != h.mig.end()) reserved = it->second;
  if (g.mig_enabled) {
    for (const auto& instance : g.mig_layout) {
      HeldMigInstance held;
      held.start = instance.start;
      if (model && instance.profile >= 0 && instance.profile < static_cast<int>(model->mig_profiles.size())) {
        held.profile = model->mig_profiles[instance.profile].name;
        held.slices = model->mig_profiles[instance.profile].memory_slices;
      }
      auto match = std::ranges::find_if(
          reserved, [&](const auto& r) { return r.first.start == held.start && r.first.profile == held.profile; });
      if (match != reserved.end()) {
        held.holder = match->second;
        reserved.erase(match);
      }
      out.instances.push_back(std::move(held));
    }
  }
  // Reserved before the node reports the layout (a re-layout under way).
  for (const auto& [m, holder] : reserved) out.instances.push_back({m.profile, m.start, m.slices, holder});
  std::ranges::sort(out.instances, {}, &HeldMigInstance::start);
  if (auto it = h.gpus.find(key); it != h.gpus.end()) out.holder = it->second;
  if (auto it = h.shares.find(key); it != h.shares.end()) out.shares = it->second;
  return out;
}

HeldNode HeldNodeOf(gpu::InventoryNode node, const Holdings& holdings) {
  HeldNode held;
  for (const auto& g : node.gpus) held.gpus.push_back(Held(node.name, g, holdings));
  if (auto h = holdings.nodes.find(node.name); h != holdings.nodes.end()) held.holder = h->second;
  held.layout_settled = node.mig_config_state.empty() || node.mig_config_state == "success";
  held.node = std::move(node);
  held.node.gpus.clear();
  return held;
}

// The stored nodes and reservations, from one snapshot.
struct Snapshot {
  std::vector<gpu::InventoryNode> nodes;
  std::vector<tenancy::Reservation> reservations;
};
Status ReadSnapshot(Tx& tx, Snapshot& out) {
  auto stored = tx.Inventory().ListNodes();
  SEPTA_RETURN_IF_ERROR(stored);
  out.nodes = *std::move(stored);
  auto held = tx.Reservations().List();
  SEPTA_RETURN_IF_ERROR(held);
  out.reservations = *std::move(held);
  return Status::Ok();
}

std::vector<HeldNode> HeldNodesOf(Snapshot snapshot) {
  const Holdings holdings = Index(snapshot.reservations);
  std::vector<HeldNode> held;
  held.reserve(snapshot.nodes.size());
  for (auto& node : snapshot.nodes) held.push_back(HeldNodeOf(std::move(node), holdings));
  return held;
}

}  // namespace

Result<FreeCapacity> InventoryService::FreeFor(const RequestContext& ctx, const std::string& tenant) {
  SEPTA_RETURN_IF_ERROR(CheckMaySeeTenant(ctx, tenant));
  Snapshot snapshot;
  gpu::Tier tier = gpu::Tier::kShared;
  Status st = store_.Transact(TxMode::kReadOnly, [&](Tx& tx) -> Status {
    auto owner = tx.Tenants().Get(tenant);
    SEPTA_RETURN_IF_ERROR(owner);
    auto trust_tier = tx.TrustTiers().Get(owner->trust_tier);
    SEPTA_RETURN_IF_ERROR(trust_tier);
    tier = trust_tier->gpu_sharing;
    return ReadSnapshot(tx, snapshot);
  });
  if (!st.ok()) return st;
  return FreeCapacityOf(HeldNodesOf(std::move(snapshot)), tier, gpu::Catalog::Default());
}

Result<std::vector<FreeCapacity>> InventoryService::FreeForEveryTier(const RequestContext& ctx) {
  SEPTA_RETURN_IF_ERROR(RequireAdmin(ctx.principal, "read the GPU inventory"));
  Snapshot snapshot;
  Status st = store_.Transact(TxMode::kReadOnly, [&](Tx& tx) { return ReadSnapshot(tx, snapshot); });
  if (!st.ok()) return st;
  const std::vector<HeldNode> held = HeldNodesOf(std::move(snapshot));
  std::vector<FreeCapacity> out;
  for (gpu::Tier tier : {gpu::Tier::kShared, gpu::Tier::kIsolated, gpu::Tier::kDedicated, gpu::Tier::kExclusive}) {
    out.push_back(FreeCapacityOf(held, tier, gpu::Catalog::Default()));
  }
  return out;
}

Result<InventoryPage> InventoryService::ListNodes(const RequestContext& ctx, int page_size,
                                                  const std::string& page_token) {
  SEPTA_RETURN_IF_ERROR(RequireAdmin(ctx.principal, "read the GPU inventory"));
  if (page_size < 0 || page_size > kMaxPageSize) {
    return InvalidField("page_size", "must be between 1 and " + std::to_string(kMaxPageSize));
  }
  const int limit = page_size == 0 ? kDefaultPageSize : page_size;
  std::string after;
  if (!page_token.empty()) {
    auto decoded = DecodeKeyPageToken(kNodePageTokenKind, page_token);
    SEPTA_RETURN_IF_ERROR(decoded);
    after = *std::move(decoded);
  }
  Snapshot snapshot;
  Status st = store_.Transact(TxMode::kReadOnly, [&](Tx& tx) { return ReadSnapshot(tx, snapshot); });
  if (!st.ok()) return st;

  std::vector<gpu::InventoryNode>& nodes = snapshot.nodes;
  const Holdings holdings = Index(snapshot.reservations);
  InventoryPage page;
  auto first = std::ranges::upper_bound(nodes, after, {}, &gpu::InventoryNode::name);
  for (auto it = first; it != nodes.end(); ++it) {
    if (static_cast<int>(page.nodes.size()) == limit) {
      page.next_page_token = EncodeKeyPageToken(kNodePageTokenKind, page.nodes.back().node.name);
      break;
    }
    page.nodes.push_back(HeldNodeOf(std::move(*it), holdings));
  }
  return page;
}

}  // namespace septa::core
