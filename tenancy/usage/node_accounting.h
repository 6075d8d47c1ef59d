// One node's usage, accounted scrape by scrape (docs/usage.md "Ingest"):
// the time since the node's cursor is billed to what is held on it now, the
// scrape's samples measure the last scrape interval of it, and the result is
// the rows the store adds (usage_rows.h). The shell (the usage scraper)
// reads the cursor, the holdings and the carried idle runs, calls this, and
// writes the rows in the transaction that moves the cursor: so an
// accounting is added once, whichever replica or retry gets there first.
//
// What is accounted: [from, at), from = the cursor, or `at − max_gap` when
// the cursor is older (septad was down longer: that time is not billed, and
// is reported as skipped), or `at − scrape_interval` for a node never
// accounted. A cursor at or after `at` (another replica's clock ahead of
// this one's) accounts nothing. A scrape that failed accounts the time as
// allocated and not measured: coverage drops, nothing is idle.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "common/time_point.h"
#include "tenancy/usage/held_capacity.h"
#include "tenancy/usage/usage_math.h"
#include "tenancy/usage/usage_rows.h"

namespace septa::tenancy::usage {

struct AccountedGpu {
  std::string uuid{};
  std::string model{};  // catalog name
};

struct NodeAccountingInput {
  std::string node{};
  std::optional<TimePoint> cursor{};
  TimePoint at{};
  std::optional<NodeScrape> scrape{};  // nullopt: the exporter could not be read
  std::vector<AccountedGpu> gpus{};    // the node's GPUs, with their UUIDs
  // What is held on the node now; their `held` ranges are set here.
  std::vector<HeldEntity> held{};
  std::vector<UsageIdleState> idle{};  // the node's, as carried
  std::vector<GpuPrice> prices{};
};

struct NodeAccountingSettings {
  UsageSettings usage{};
  std::chrono::milliseconds max_gap{10 * 60 * 1000};
};

struct NodeAccounting {
  TimeRange accounted{};  // empty when nothing was
  std::chrono::milliseconds skipped{0};
  std::vector<UsageMinuteRow> minutes{};
  std::vector<UsagePoolMinuteRow> pool{};
  std::vector<UsageIdleState> idle{};  // one per held entity, by key
  int unknown_gpu_samples = 0;
  int unheld_activity_samples = 0;
  int attribution_conflicts = 0;
};

// The key of a held entity's rows.
UsageEntityKey EntityKeyOf(const HeldEntity& entity);

// The rate in force at `at` for an entity of `model`, `tier` and
// `mig_profile`, as the price per hour of holding it (weight included); 0
// when no row applies.
double HourlyRateOf(const std::vector<GpuPrice>& prices, const std::string& model, gpu::Tier tier,
                    const std::string& mig_profile, double weight, TimePoint at);

// INVALID_ARGUMENT as ComputeUsage (a held entity on a GPU the node lacks,
// a GPU held more than once).
Result<NodeAccounting> AccountNode(const NodeAccountingInput& input, const NodeAccountingSettings& settings);

}  // namespace septa::tenancy::usage
