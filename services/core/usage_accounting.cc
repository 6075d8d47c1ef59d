#include "services/core/usage_accounting.h"

#include <algorithm>

#include "tenancy/usage/held_capacity.h"

namespace septa::core {

namespace {

namespace usage = tenancy::usage;

// The GPU-instance ids the inventory observed on `node`, as HeldEntities reads them.
std::vector<usage::MigInstanceId> GiIdsOf(const gpu::InventoryNode& node) {
  std::vector<usage::MigInstanceId> out;
  for (const gpu::InventoryGpu& gpu : node.gpus) {
    for (const auto& [start, gi_id] : gpu.mig_gi_ids) {
      out.push_back({.node = node.name, .gpu = gpu.index, .start = start, .gi_id = gi_id});
    }
  }
  return out;
}

}  // namespace

std::vector<usage::DcgmGpuRef> UsageAccounting::GpuRefs(const std::string& node,
                                                        const std::optional<usage::NodeScrape>& scrape) {
  std::lock_guard lock(mu_);
  if (scrape) gpu_refs_[node] = usage::GpuRefsOf(scrape->samples);
  const auto it = gpu_refs_.find(node);
  return it == gpu_refs_.end() ? std::vector<usage::DcgmGpuRef>{} : it->second;
}

Result<NodeAccountingResult> UsageAccounting::Account(const std::string& node, TimePoint at,
                                                      const std::optional<usage::NodeScrape>& scrape) {
  const std::vector<usage::DcgmGpuRef> refs = GpuRefs(node, scrape);
  Result<NodeAccountingResult> accounted =
      TransactFor(store_, TxMode::kReadWrite, [&](Tx& tx) -> Result<NodeAccountingResult> {
        NodeAccountingResult result;
        usage::NodeAccountingInput input{.node = node, .at = at, .scrape = scrape};
        SEPTA_ASSIGN_OR_RETURN(input.cursor, tx.Usage().Cursor(node));
        auto inventory = tx.Inventory().GetNode(node);
        if (IsNotFound(inventory)) return result;  // gone: nothing is held on it any more
        SEPTA_RETURN_IF_ERROR(inventory.status());
        result.gpu_node = !inventory->gpus.empty();
        result.learnt = usage::CompleteGpuIdentities(*inventory, refs, catalog_);
        for (const gpu::InventoryGpu& gpu : inventory->gpus) {
          if (!gpu.uuid.empty()) input.gpus.push_back({.uuid = gpu.uuid, .model = gpu.model});
        }
        const std::vector<gpu::InventoryNode> nodes = {*inventory};
        const std::vector<usage::MigInstanceId> gi_ids = GiIdsOf(*inventory);
        SEPTA_ASSIGN_OR_RETURN(const auto reservations, tx.Reservations().ListOnNode(node));
        for (const tenancy::Reservation& reservation : reservations) {
          tenancy::Reservation here = reservation;  // only what it holds on this node: the others are not read
          std::erase_if(here.shares, [&](const auto& s) { return s.node != node; });
          std::erase_if(here.mig, [&](const auto& m) { return m.node != node; });
          std::erase_if(here.gpus, [&](const auto& g) { return g.node != node; });
          std::erase_if(here.nodes, [&](const auto& n) { return n != node; });
          SEPTA_ASSIGN_OR_RETURN(const tenancy::VirtualCluster vcluster,
                                 tx.VirtualClusters().Get(reservation.tenant, reservation.vcluster));
          auto held = usage::HeldEntities(here, nodes, catalog_, gi_ids, {}, vcluster.host_namespace);
          if (!held.ok()) {
            ++result.unmeasurable_reservations;
            result.unmeasurable = held.status().message();
            continue;
          }
          for (usage::HeldEntity& entity : *held) input.held.push_back(std::move(entity));
        }
        SEPTA_ASSIGN_OR_RETURN(input.idle, tx.Usage().IdleStates(node));
        SEPTA_ASSIGN_OR_RETURN(input.prices, tx.Usage().Prices());
        SEPTA_ASSIGN_OR_RETURN(usage::NodeAccounting accounting, usage::AccountNode(input, settings_));
        result.skipped = accounting.skipped;
        result.unknown_gpu_samples = accounting.unknown_gpu_samples;
        result.unheld_activity_samples = accounting.unheld_activity_samples;
        result.attribution_conflicts = accounting.attribution_conflicts;
        if (accounting.accounted.end <= accounting.accounted.start) return result;
        result.accounted = std::chrono::duration_cast<std::chrono::milliseconds>(accounting.accounted.end -
                                                                                 accounting.accounted.start);
        result.entities = static_cast<int>(input.held.size());
        UsageScrapeBatch batch{.node = node,
                               .expected_cursor = input.cursor,
                               .cursor = accounting.accounted.end,
                               .minutes = std::move(accounting.minutes),
                               .pool = std::move(accounting.pool),
                               .idle = std::move(accounting.idle)};
        const Status recorded = tx.Usage().Record(batch);
        if (recorded.code() == Code::kFailedPrecondition) {  // accounted by another replica or run
          return NodeAccountingResult{.gpu_node = result.gpu_node};
        }
        SEPTA_RETURN_IF_ERROR(recorded);
        result.recorded = true;
        result.minutes = std::move(batch.minutes);  // the rows recorded, for /metrics: moved, not copied
        result.idle = std::move(batch.idle);
        return result;
      });
  if (accounted.ok() && !accounted->gpu_node) {  // gone, or no GPUs: no longer scraped
    std::lock_guard lock(mu_);
    gpu_refs_.erase(node);
  }
  return accounted;
}

}  // namespace septa::core
