// Accounts one node's scrape (tenancy/usage/node_accounting.h) against what
// the database holds, in one transaction: the node's cursor, its inventory
// (GPU UUIDs, MIG GPU-instance ids), the reservations on it and their
// virtual clusters' host namespaces, the carried idle runs and the prices;
// then writes the rows and moves the cursor (UsageRepository::Record). A
// transaction that finds the cursor moved under it (another replica, a
// retry) adds nothing. The scraper (reconcile/usage_scrape_controller.h)
// calls it with what it read from the node's exporter, or nothing.
#pragma once

#include <chrono>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "common/time_point.h"
#include "gpu/catalog.h"
#include "services/core/store.h"
#include "tenancy/usage/gpu_identity.h"
#include "tenancy/usage/node_accounting.h"

namespace septa::core {

// What one accounting did, for the scraper's metrics and logs.
struct NodeAccountingResult {
  bool gpu_node = false;  // the inventory has the node, with GPUs: false, and it is no longer scraped
  bool recorded = false;  // false: nothing to account, or the cursor had moved
  std::chrono::milliseconds accounted{0};
  std::chrono::milliseconds skipped{0};
  int entities = 0;
  int unknown_gpu_samples = 0;
  int unheld_activity_samples = 0;
  int attribution_conflicts = 0;
  // Reservations whose holdings on the node cannot be measured (a GPU
  // without a UUID, a MIG instance without a GPU-instance id): billed by
  // nobody until the inventory knows them; each named in `unmeasurable`.
  int unmeasurable_reservations = 0;
  std::string unmeasurable{};
  // Identities the inventory lacked and the exporter gave (tenancy/usage/gpu_identity.h).
  tenancy::usage::LearntIdentities learnt{};
  // What was recorded: the /metrics counters and gauges (reconcile/usage_metrics.h).
  std::vector<tenancy::usage::UsageMinuteRow> minutes{};
  std::vector<tenancy::usage::UsageIdleState> idle{};
};

class UsageAccounting {
 public:
  UsageAccounting(Store& store, const gpu::Catalog& catalog, tenancy::usage::NodeAccountingSettings settings)
      : store_(store), catalog_(catalog), settings_(settings) {}

  // `scrape`: the node's exporter as read at `at`, normalised; nullopt when
  // it could not be read.
  Result<NodeAccountingResult> Account(const std::string& node, TimePoint at,
                                       const std::optional<tenancy::usage::NodeScrape>& scrape);

  const tenancy::usage::NodeAccountingSettings& settings() const { return settings_; }

 private:
  // The GPU references of the node's last scrape read, so that a failed
  // scrape still knows the identities the exporter gave (this replica's
  // memory: after a restart, from its first scrape read).
  std::vector<tenancy::usage::DcgmGpuRef> GpuRefs(const std::string& node,
                                                  const std::optional<tenancy::usage::NodeScrape>& scrape);

  Store& store_;
  const gpu::Catalog& catalog_;
  tenancy::usage::NodeAccountingSettings settings_;
  std::mutex mu_;
  std::map<std::string, std::vector<tenancy::usage::DcgmGpuRef>> gpu_refs_;  // by node
};

}  // namespace septa::core
