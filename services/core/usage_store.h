// What septad keeps of GPU usage (issue 34, docs/usage.md): the accrual of
// each held entity per minute, summed per hour and per day for reports, the
// platform's capacity and unreserved pool per minute, each entity's idle
// run (hoarders), the dated price table, and per node how far usage has been
// accounted. Rows are written only by the usage scraper
// (reconcile/usage_scrape_controller.h), one node's scrape per call, in the
// transaction that moves that node's cursor: an accounting that lost a race
// (another replica, a retry after a crash) adds nothing.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "common/time_point.h"
#include "gpu/inventory.h"
#include "tenancy/usage/usage_rows.h"

namespace septa::core {

// The rows are the pure accounting's (tenancy/usage/usage_rows.h).
using tenancy::usage::GpuPrice;
using tenancy::usage::UsageEntityKey;
using tenancy::usage::UsageIdleState;
using tenancy::usage::UsageMinuteRow;
using tenancy::usage::UsagePoolMinuteRow;

struct UsageScrapeBatch {
  std::string node{};
  std::optional<TimePoint> expected_cursor{};  // as read; nullopt: the node was never accounted
  TimePoint cursor{};                          // accounted until here
  std::vector<UsageMinuteRow> minutes{};
  std::vector<UsagePoolMinuteRow> pool{};
  std::vector<UsageIdleState> idle{};  // the node's idle states, replacing all it had
};

enum class UsageResolution { kMinute, kHour, kDay };
enum class UsageDimension { kTenant, kVcluster, kTier, kModel, kMigProfile };

struct UsageQuery {
  std::string tenant{};  // empty: every tenant
  TimePoint start{};     // on the resolution's grid
  TimePoint end{};       // after start, on the grid
  UsageResolution resolution = UsageResolution::kDay;
  std::chrono::seconds step{0};            // a multiple of the resolution; 0: the whole window is one bucket
  std::vector<UsageDimension> group_by{};  // kVcluster groups by tenant too
};

// One bucket of a group. Dimensions not grouped by are empty.
struct UsageBucket {
  TimePoint start{};
  std::string tenant{};
  std::string vcluster{};
  std::string tier{};
  std::string model{};
  std::string mig_profile{};
  double allocated_gpu_seconds = 0;
  double measured_gpu_seconds = 0;
  double used_gpu_seconds = 0;
  double waste_gpu_seconds = 0;
  double cost = 0;
  double reserved_memory_mib = 0;           // the largest of the bucket's rows
  std::optional<double> used_memory_mib{};  // the largest of the bucket's rows
  bool operator==(const UsageBucket&) const = default;
};

struct UsagePoolQuery {
  TimePoint start{};
  TimePoint end{};
  UsageResolution resolution = UsageResolution::kDay;
  std::chrono::seconds step{0};
  bool by_model = false;
};

struct UsagePoolBucket {
  TimePoint start{};
  std::string model{};  // when by_model
  double capacity_gpu_seconds = 0;
  double reserved_gpu_seconds = 0;
  double used_gpu_seconds = 0;
  bool operator==(const UsagePoolBucket&) const = default;
};

class UsageRepository {
 public:
  virtual ~UsageRepository() = default;
  // How far the node's usage is accounted; nullopt when never.
  virtual Result<std::optional<TimePoint>> Cursor(const std::string& node) = 0;
  // Adds the minute rows to their minute, hour and day buckets and the pool
  // rows to theirs, replaces the node's idle states and moves its cursor —
  // iff the cursor is still `expected_cursor`; kFailedPrecondition
  // otherwise, with nothing written.
  virtual Status Record(const UsageScrapeBatch& batch) = 0;
  virtual Result<std::vector<UsageIdleState>> IdleStates(const std::string& node) = 0;  // by entity
  virtual Result<std::vector<UsageIdleState>> AllIdleStates() = 0;                      // by entity
  // Buckets ordered by start, then by the grouped dimensions.
  virtual Result<std::vector<UsageBucket>> Query(const UsageQuery& query) = 0;
  virtual Result<std::vector<UsagePoolBucket>> QueryPool(const UsagePoolQuery& query) = 0;
  // Ordered by (model, tier's name, mig_profile, valid_from).
  virtual Result<std::vector<GpuPrice>> Prices() = 0;
  // kAlreadyExists when the same (model, tier, mig_profile, valid_from)
  // has another rate: a rate once in force never changes (past bills).
  virtual Status PutPrice(const GpuPrice& price) = 0;
  // Retention: deletes up to `limit` (positive) minute rows before
  // `cutoff`, the entities' oldest first and then the pool's; the number
  // deleted. Hours and days are kept.
  virtual Result<int> DeleteMinutesBefore(TimePoint cutoff, int limit) = 0;
};

// What both stores refuse before touching a row, naming the field (the
// database's constraints refuse the rest, and FakeStore as they do).
//
// A batch is one node's scrape: a node named, every row of that node (its
// cursor vouches for no other), each minute a whole minute, and no entity
// or GPU twice in one minute nor an entity's idle state twice (a scrape
// measures each once: a second row is the scraper's bug, not usage to add).
Status CheckUsageBatch(const UsageScrapeBatch& batch);
// A window of a Query or QueryPool: start and end whole minutes, hours or
// days in UTC as the resolution says, end after start, and a step of 0 or
// a positive multiple of the resolution.
Status CheckUsageWindow(TimePoint start, TimePoint end, UsageResolution resolution, std::chrono::seconds step);
// The stride of a window's buckets: `step`, or the whole window when 0.
TimePoint::duration UsageBucketStride(TimePoint start, TimePoint end, std::chrono::seconds step);
// The end of a window's bucket that starts at `bucket`: a stride later, the
// window's end at the latest (the last bucket may be shorter).
TimePoint UsageBucketEnd(TimePoint bucket, TimePoint start, TimePoint end, std::chrono::seconds step);

}  // namespace septa::core
