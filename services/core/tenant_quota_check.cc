#include "services/core/tenant_quota_check.h"

#include <map>
#include <vector>

#include "tenancy/capacity.h"
#include "tenancy/virtual_cluster_ref.h"

namespace septa::core {

namespace {

// Inventory nodes, read from the transaction as usage needs them: a tenant's
// reservations name few, so the whole inventory is read only for a capacity
// of whole nodes that holds no reservation yet.
class NodeReader {
 public:
  explicit NodeReader(Tx& tx) : tx_(tx) {}

  Result<std::vector<gpu::InventoryNode>> Named(const tenancy::Reservation& r) {
    std::vector<std::string> names = r.nodes;
    for (const auto& s : r.shares) names.push_back(s.node);
    for (const auto& m : r.mig) names.push_back(m.node);
    for (const auto& g : r.gpus) names.push_back(g.node);
    std::vector<gpu::InventoryNode> nodes;
    std::map<std::string, bool> added;
    for (const std::string& name : names) {
      if (added[name]) continue;
      added[name] = true;
      auto it = read_.find(name);
      if (it == read_.end()) {
        auto node = tx_.Inventory().GetNode(name);
        if (!node.ok()) {
          return Internal("cannot count the GPU-equivalents of the reservation of " +
                          tenancy::VirtualClusterText(r.tenant, r.vcluster) + ": " + node.status().message());
        }
        it = read_.emplace(name, *std::move(node)).first;
      }
      nodes.push_back(it->second);
    }
    return nodes;
  }

  Result<std::vector<gpu::InventoryNode>> All() { return tx_.Inventory().ListNodes(); }

 private:
  Tx& tx_;
  std::map<std::string, gpu::InventoryNode> read_;
};

// GPU-equivalents of a virtual cluster: what its reservation holds, or what
// its capacity asks for when it holds none.
Result<std::int64_t> GpuMilliOf(NodeReader& nodes, const gpu::Catalog& catalog, const tenancy::Capacity& capacity,
                                const tenancy::Reservation* reservation) {
  if (reservation != nullptr) {
    auto named = nodes.Named(*reservation);
    SEPTA_RETURN_IF_ERROR(named);
    return tenancy::ReservationGpuMilli(*reservation, catalog, *named);
  }
  if (capacity.tier != gpu::Tier::kExclusive) return tenancy::CapacityGpuMilli(capacity, catalog, {});
  auto all = nodes.All();
  SEPTA_RETURN_IF_ERROR(all);
  return tenancy::CapacityGpuMilli(capacity, catalog, *all);
}

Result<tenancy::TenantUsage> UsageOfOthers(Tx& tx, NodeReader& nodes, const gpu::Catalog& catalog,
                                           const std::string& tenant, const std::string& except, bool with_gpus) {
  tenancy::TenantUsage usage;
  VirtualClusterQuery query;
  query.tenant = tenant;
  query.after_tenant = tenant;
  query.limit = 500;
  while (true) {
    auto page = tx.VirtualClusters().List(query);
    SEPTA_RETURN_IF_ERROR(page);
    for (const tenancy::VirtualCluster& vc : *page) {
      if (vc.name == except) continue;
      std::int64_t gpu_milli = 0;
      if (with_gpus) {
        auto reservation = tx.Reservations().Get(tenant, vc.name);
        if (!reservation.ok() && reservation.status().code() != Code::kNotFound) return reservation.status();
        auto milli = GpuMilliOf(nodes, catalog, vc.capacity, reservation.ok() ? &*reservation : nullptr);
        SEPTA_RETURN_IF_ERROR(milli);
        gpu_milli = *milli;
      }
      usage += tenancy::UsageOf(gpu_milli, vc.quota);
    }
    if (static_cast<int>(page->size()) < query.limit) return usage;
    query.after_name = page->back().name;
  }
}

}  // namespace

Result<tenancy::TenantUsage> ReadTenantUsage(Tx& tx, const gpu::Catalog& catalog, const std::string& tenant,
                                             const std::string& except, bool with_gpus) {
  NodeReader nodes(tx);
  return UsageOfOthers(tx, nodes, catalog, tenant, except, with_gpus);
}

Status EnforceTenantQuota(Tx& tx, const gpu::Catalog& catalog, const Tenant& tenant,
                          const tenancy::VirtualCluster& requested, const tenancy::VirtualCluster* previous,
                          const tenancy::Reservation* previous_reservation) {
  if (tenant.quota == tenancy::TenantQuota{}) return Status::Ok();
  NodeReader nodes(tx);
  // GPU-equivalents matter only when the quota bounds them and the request
  // may grow them: a new capacity, or a changed one.
  const bool gpus_change = previous == nullptr || !(previous->capacity == requested.capacity);
  const bool with_gpus = tenant.quota.gpu_milli.has_value() && gpus_change;
  std::int64_t requested_milli = 0;
  std::optional<tenancy::TenantUsage> before;
  if (previous != nullptr) {
    std::int64_t previous_milli = 0;
    if (with_gpus) {
      auto milli = GpuMilliOf(nodes, catalog, previous->capacity, previous_reservation);
      SEPTA_RETURN_IF_ERROR(milli);
      previous_milli = *milli;
    }
    before = tenancy::UsageOf(previous_milli, previous->quota);
    requested_milli = previous_milli;  // unchanged capacity: unchanged GPU-equivalents
  }
  if (with_gpus) {
    auto milli = GpuMilliOf(nodes, catalog, requested.capacity, nullptr);
    SEPTA_RETURN_IF_ERROR(milli);
    requested_milli = *milli;
  }
  auto others = UsageOfOthers(tx, nodes, catalog, tenant.name, requested.name, with_gpus);
  SEPTA_RETURN_IF_ERROR(others);
  return tenancy::CheckTenantQuota(tenant.quota, *others, tenancy::UsageOf(requested_milli, requested.quota),
                                   before ? &*before : nullptr);
}

}  // namespace septa::core
