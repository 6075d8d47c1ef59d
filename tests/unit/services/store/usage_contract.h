// The contract of core::UsageRepository (services/core/usage_store.h), run
// against every store beside StoreContract: the per-node cursor's
// compare-and-set, the additive minute, hour and day buckets, queries, the
// pool, idle states, prices and retention, as migrations/0023_usage.sql
// keeps them. Included by the same test files as store_contract.h.
//
// Figures are sums of binary fractions (30, 0.5, 0.25, ...), exact in
// floating point whatever order a store adds them in.
#pragma once

#include <iomanip>
#include <limits>
#include <sstream>

#include "tests/unit/services/store/store_contract.h"

namespace septa::core::contract {

constexpr std::int64_t kUsageDay = 1'799'971'200;  // a midnight in UTC (2027-01-14)

inline TimePoint UsageMinute(std::int64_t minutes_after_midnight) {
  return At(kUsageDay + 60 * minutes_after_midnight);
}
inline TimePoint UsageHour(std::int64_t hours) { return UsageMinute(60 * hours); }
inline TimePoint UsageDay(std::int64_t days) { return UsageMinute(1440 * days); }

inline UsageEntityKey UsageEntity(std::string tenant, std::string vcluster, std::string gpu_uuid = "GPU-0",
                                  int gi_id = -1, std::string node = "n1") {
  return {.tenant = std::move(tenant),
          .vcluster = std::move(vcluster),
          .node = std::move(node),
          .gpu_uuid = std::move(gpu_uuid),
          .gi_id = gi_id};
}

// Half a minute of a dedicated H100 of which `used` GPU-seconds were used.
inline UsageMinuteRow UsageRow(UsageEntityKey entity, TimePoint minute, double used) {
  return {.entity = std::move(entity),
          .minute = minute,
          .tier = gpu::Tier::kDedicated,
          .model = "H100-80GB",
          .weight = 1,
          .allocated_gpu_seconds = 30,
          .measured_gpu_seconds = 30,
          .used_gpu_seconds = used,
          .waste_gpu_seconds = 30 - used,
          .cost = 0.25,
          .activity_max = used / 30,
          .reserved_memory_mib = 81920,
          .samples = 1};
}

inline UsagePoolMinuteRow UsagePoolRow(std::string node, std::string gpu_uuid, std::string model, TimePoint minute,
                                       double capacity, double reserved, double used) {
  return {.minute = minute,
          .node = std::move(node),
          .gpu_uuid = std::move(gpu_uuid),
          .model = std::move(model),
          .capacity_gpu_seconds = capacity,
          .reserved_gpu_seconds = reserved,
          .used_gpu_seconds = used};
}

inline std::string UsageFigureText(double x) {
  std::ostringstream out;
  out << std::setprecision(std::numeric_limits<double>::max_digits10) << x;
  return out.str();
}

inline std::string UsageOffset(TimePoint t) {
  return "+" + std::to_string(std::chrono::duration_cast<std::chrono::minutes>(t - At(kUsageDay)).count()) + "m";
}

// "+61m ann/train/dedicated/H100-80GB/ a=60 m=60 u=30 w=30 c=0.5 r=81920 f=-": the start in minutes after
// kUsageDay, the dimensions, then allocated, measured, used, waste, cost, reserved and used memory.
inline std::string UsageLine(const UsageBucket& b) {
  return UsageOffset(b.start) + " " + b.tenant + "/" + b.vcluster + "/" + b.tier + "/" + b.model + "/" + b.mig_profile +
         " a=" + UsageFigureText(b.allocated_gpu_seconds) + " m=" + UsageFigureText(b.measured_gpu_seconds) +
         " u=" + UsageFigureText(b.used_gpu_seconds) + " w=" + UsageFigureText(b.waste_gpu_seconds) +
         " c=" + UsageFigureText(b.cost) + " r=" + UsageFigureText(b.reserved_memory_mib) +
         " f=" + (b.used_memory_mib ? UsageFigureText(*b.used_memory_mib) : "-");
}

inline std::string UsagePoolLine(const UsagePoolBucket& b) {
  return UsageOffset(b.start) + " " + b.model + " cap=" + UsageFigureText(b.capacity_gpu_seconds) +
         " res=" + UsageFigureText(b.reserved_gpu_seconds) + " used=" + UsageFigureText(b.used_gpu_seconds);
}

// Every field, times in nanoseconds since the epoch.
inline std::string UsageIdleLine(const UsageIdleState& s) {
  return s.entity.tenant + "/" + s.entity.vcluster + "/" + s.entity.node + "/" + s.entity.gpu_uuid + "/" +
         std::to_string(s.entity.gi_id) + " " + std::string(gpu::TierName(s.tier)) +
         " start=" + std::to_string(s.window_start.time_since_epoch().count()) +
         " act=" + UsageFigureText(s.window_activity_max) +
         " mem=" + (s.window_used_memory_mib ? UsageFigureText(*s.window_used_memory_mib) : "-") +
         " idle=" + std::to_string(s.idle_ms) + " holding=" + (s.holding_memory ? "yes" : "no") +
         " updated=" + std::to_string(s.updated.time_since_epoch().count());
}

inline std::vector<UsageDimension> EveryUsageDimension() {
  return {UsageDimension::kTenant, UsageDimension::kVcluster, UsageDimension::kTier, UsageDimension::kModel,
          UsageDimension::kMigProfile};
}

template <typename Env>
class UsageContract : public StoreContract<Env> {
 protected:
  Status Record(const UsageScrapeBatch& batch) {
    return this->Write([&](Tx& tx) { return tx.Usage().Record(batch); });
  }
  // As the usage scraper does: from the node's cursor as read, 30 s on
  // (kUsageDay when the node was never accounted).
  Status Scrape(const std::string& node, std::vector<UsageMinuteRow> minutes, std::vector<UsagePoolMinuteRow> pool = {},
                std::vector<UsageIdleState> idle = {}) {
    return this->Write([&](Tx& tx) -> Status {
      SEPTA_ASSIGN_OR_RETURN(const std::optional<TimePoint> cursor, tx.Usage().Cursor(node));
      return tx.Usage().Record({.node = node,
                                .expected_cursor = cursor,
                                .cursor = cursor ? *cursor + std::chrono::seconds(30) : At(kUsageDay),
                                .minutes = minutes,
                                .pool = pool,
                                .idle = idle});
    });
  }
  Result<std::optional<TimePoint>> CursorOf(const std::string& node) {
    return this->template Read<std::optional<TimePoint>>([&](Tx& tx) { return tx.Usage().Cursor(node); });
  }
  Result<std::vector<UsageBucket>> QueryUsage(const UsageQuery& q) {
    return this->template Read<std::vector<UsageBucket>>([&](Tx& tx) { return tx.Usage().Query(q); });
  }
  Result<std::vector<UsagePoolBucket>> QueryUsagePool(const UsagePoolQuery& q) {
    return this->template Read<std::vector<UsagePoolBucket>>([&](Tx& tx) { return tx.Usage().QueryPool(q); });
  }
  // The buckets as UsageLines; the error as the only line.
  std::vector<std::string> Lines(const UsageQuery& q) {
    auto buckets = QueryUsage(q);
    if (!buckets.ok()) return {buckets.status().ToString()};
    std::vector<std::string> lines;
    for (const UsageBucket& b : *buckets) lines.push_back(UsageLine(b));
    return lines;
  }
  std::vector<std::string> PoolLines(const UsagePoolQuery& q) {
    auto buckets = QueryUsagePool(q);
    if (!buckets.ok()) return {buckets.status().ToString()};
    std::vector<std::string> lines;
    for (const UsagePoolBucket& b : *buckets) lines.push_back(UsagePoolLine(b));
    return lines;
  }
  std::vector<std::string> IdleLines(const std::function<Result<std::vector<UsageIdleState>>(Tx&)>& read) {
    auto states = this->template Read<std::vector<UsageIdleState>>(read);
    if (!states.ok()) return {states.status().ToString()};
    std::vector<std::string> lines;
    for (const UsageIdleState& s : *states) lines.push_back(UsageIdleLine(s));
    return lines;
  }
  Result<std::vector<GpuPrice>> Prices() {
    return this->template Read<std::vector<GpuPrice>>([](Tx& tx) { return tx.Usage().Prices(); });
  }
  Status PutPrice(const GpuPrice& price) {
    return this->Write([&](Tx& tx) { return tx.Usage().PutPrice(price); });
  }
  Result<int> DeleteMinutesBefore(TimePoint cutoff, int limit) {
    std::optional<Result<int>> deleted;
    const Status st = this->Write([&](Tx& tx) {
      deleted.emplace(tx.Usage().DeleteMinutesBefore(cutoff, limit));
      return ToStatus(*deleted);
    });
    if (!st.ok()) return st;
    return *deleted;
  }
  // Every figure of the whole day, at minute resolution, by every dimension and minute.
  std::vector<std::string> MinuteLines() {
    return Lines({.start = UsageDay(0),
                  .end = UsageDay(1),
                  .resolution = UsageResolution::kMinute,
                  .step = std::chrono::minutes(1),
                  .group_by = EveryUsageDimension()});
  }
};

TYPED_TEST_SUITE_P(UsageContract);

TYPED_TEST_P(UsageContract, TheCursorMovesOnlyFromWhereItWasRead) {
  const auto cursor = [&](const std::string& node) -> std::optional<TimePoint> {
    auto read = this->CursorOf(node);
    EXPECT_TRUE(read.ok()) << read.status().ToString();
    return read.ok() ? *read : std::optional<TimePoint>(At(0));
  };
  const auto row = [](double used) { return std::vector{UsageRow(UsageEntity("ann", "train"), UsageMinute(0), used)}; };
  EXPECT_EQ(cursor("n1"), std::nullopt);

  // The first accounting of a node expects none; the cursor keeps microseconds.
  const Status first = this->Record({.node = "n1", .cursor = At(kUsageDay + 30, 123'456'789), .minutes = row(20)});
  ASSERT_TRUE(first.ok()) << first.ToString();
  EXPECT_EQ(cursor("n1"), AtMicros(kUsageDay + 30, 123'456'789));

  // A second "first" accounting (another replica, a retry after a crash),
  // and one from a cursor a microsecond off, are refused and write nothing,
  // even when the caller commits anyway.
  const UsageScrapeBatch stale[] = {
      {.node = "n1", .cursor = At(kUsageDay + 60), .minutes = row(1)},
      {.node = "n1",
       .expected_cursor = AtMicros(kUsageDay + 30, 123'457'789),
       .cursor = At(kUsageDay + 60),
       .minutes = row(1),
       .pool = {UsagePoolRow("n1", "GPU-0", "H100-80GB", UsageMinute(0), 30, 30, 1)},
       .idle = {{.entity = UsageEntity("ann", "train"), .tier = gpu::Tier::kDedicated}}},
  };
  for (const UsageScrapeBatch& batch : stale) {
    const Status committed = this->Write([&](Tx& tx) {
      EXPECT_EQ(tx.Usage().Record(batch).code(), Code::kFailedPrecondition);
      return Status::Ok();
    });
    ASSERT_TRUE(committed.ok()) << committed.ToString();
  }
  EXPECT_EQ(cursor("n1"), AtMicros(kUsageDay + 30, 123'456'789));
  EXPECT_THAT(this->MinuteLines(),
              ElementsAre("+0m ann/train/dedicated/H100-80GB/ a=30 m=30 u=20 w=10 c=0.25 r=81920 f=-"));
  EXPECT_THAT(this->PoolLines({.start = UsageDay(0), .end = UsageDay(1)}), IsEmpty());
  EXPECT_THAT(this->IdleLines([](Tx& tx) { return tx.Usage().AllIdleStates(); }), IsEmpty());

  // The cursor as first given, nanoseconds and all, is where it is: stores compare microseconds.
  const Status next = this->Record({.node = "n1",
                                    .expected_cursor = At(kUsageDay + 30, 123'456'001),
                                    .cursor = At(kUsageDay + 60),
                                    .minutes = row(5)});
  ASSERT_TRUE(next.ok()) << next.ToString();
  // And the cursor as read back.
  const std::optional<TimePoint> read = cursor("n1");
  ASSERT_EQ(read, At(kUsageDay + 60));
  const Status again =
      this->Record({.node = "n1", .expected_cursor = read, .cursor = At(kUsageDay + 90), .minutes = row(1)});
  ASSERT_TRUE(again.ok()) << again.ToString();
  EXPECT_EQ(cursor("n1"), At(kUsageDay + 90));
  EXPECT_THAT(this->MinuteLines(),
              ElementsAre("+0m ann/train/dedicated/H100-80GB/ a=90 m=90 u=26 w=64 c=0.75 r=81920 f=-"));

  // Each node has its own cursor.
  EXPECT_EQ(cursor("n2"), std::nullopt);
  EXPECT_TRUE(this->Record({.node = "n2", .cursor = At(kUsageDay + 30)}).ok());
  EXPECT_EQ(cursor("n2"), At(kUsageDay + 30));
  EXPECT_EQ(cursor("n1"), At(kUsageDay + 90));
}

TYPED_TEST_P(UsageContract, ScrapesOfOneMinuteAddUpInItsMinuteHourAndDay) {
  const UsageEntityKey train = UsageEntity("ann", "train");
  ASSERT_TRUE(this->Scrape("n1", {UsageRow(train, UsageMinute(61), 20)}).ok());
  ASSERT_TRUE(this->Scrape("n1", {UsageRow(train, UsageMinute(61), 10)}).ok());
  ASSERT_TRUE(this->Scrape("n1", {UsageRow(train, UsageMinute(62), 30), UsageRow(train, UsageMinute(1500), 0)}).ok());
  const auto lines = [&](UsageResolution resolution, TimePoint end, std::chrono::seconds step) {
    return this->Lines(
        {.start = UsageDay(0), .end = end, .resolution = resolution, .step = step, .group_by = EveryUsageDimension()});
  };
  EXPECT_THAT(lines(UsageResolution::kMinute, UsageDay(2), std::chrono::minutes(1)),
              ElementsAre("+61m ann/train/dedicated/H100-80GB/ a=60 m=60 u=30 w=30 c=0.5 r=81920 f=-",
                          "+62m ann/train/dedicated/H100-80GB/ a=30 m=30 u=30 w=0 c=0.25 r=81920 f=-",
                          "+1500m ann/train/dedicated/H100-80GB/ a=30 m=30 u=0 w=30 c=0.25 r=81920 f=-"));
  EXPECT_THAT(lines(UsageResolution::kHour, UsageDay(2), std::chrono::hours(1)),
              ElementsAre("+60m ann/train/dedicated/H100-80GB/ a=90 m=90 u=60 w=30 c=0.75 r=81920 f=-",
                          "+1500m ann/train/dedicated/H100-80GB/ a=30 m=30 u=0 w=30 c=0.25 r=81920 f=-"));
  EXPECT_THAT(lines(UsageResolution::kDay, UsageDay(2), std::chrono::days(1)),
              ElementsAre("+0m ann/train/dedicated/H100-80GB/ a=90 m=90 u=60 w=30 c=0.75 r=81920 f=-",
                          "+1440m ann/train/dedicated/H100-80GB/ a=30 m=30 u=0 w=30 c=0.25 r=81920 f=-"));
}

TYPED_TEST_P(UsageContract, MemoryKeepsTheLargestAndIsUnknownOnlyWhenNeverSampled) {
  const UsageEntityKey train = UsageEntity("ann", "train"), dev = UsageEntity("ann", "dev", "GPU-1");
  const auto with_memory = [&](TimePoint minute, double reserved, std::optional<double> used) {
    UsageMinuteRow r = UsageRow(train, minute, 1);
    r.reserved_memory_mib = reserved;
    r.used_memory_mib = used;
    return r;
  };
  for (const UsageMinuteRow& r : {with_memory(UsageMinute(0), 1000, std::nullopt),
                                  with_memory(UsageMinute(0), 500, 300), with_memory(UsageMinute(0), 800, std::nullopt),
                                  with_memory(UsageMinute(0), 900, 200), with_memory(UsageMinute(1), 100, 700)}) {
    ASSERT_TRUE(this->Scrape("n1", {r, UsageRow(dev, r.minute, 0)}).ok());
  }
  const auto memory = [&](UsageResolution resolution, std::chrono::seconds step) {
    std::vector<std::string> out;
    auto buckets = this->QueryUsage({.start = UsageDay(0),
                                     .end = UsageDay(1),
                                     .resolution = resolution,
                                     .step = step,
                                     .group_by = {UsageDimension::kVcluster}});
    EXPECT_TRUE(buckets.ok()) << buckets.status().ToString();
    for (const UsageBucket& b : buckets.ok() ? *buckets : std::vector<UsageBucket>{}) {
      out.push_back(UsageOffset(b.start) + " " + b.vcluster + " r=" + UsageFigureText(b.reserved_memory_mib) +
                    " f=" + (b.used_memory_mib ? UsageFigureText(*b.used_memory_mib) : "-"));
    }
    return out;
  };
  EXPECT_THAT(
      memory(UsageResolution::kMinute, std::chrono::minutes(1)),
      ElementsAre("+0m dev r=81920 f=-", "+0m train r=1000 f=300", "+1m dev r=81920 f=-", "+1m train r=100 f=700"));
  EXPECT_THAT(memory(UsageResolution::kHour, std::chrono::hours(1)),
              ElementsAre("+0m dev r=81920 f=-", "+0m train r=1000 f=700"));
  EXPECT_THAT(memory(UsageResolution::kDay, std::chrono::seconds(0)),
              ElementsAre("+0m dev r=81920 f=-", "+0m train r=1000 f=700"));
  // Not grouped: the day's rows in one bucket, with the largest memory of any.
  EXPECT_THAT(this->Lines({.start = UsageDay(0), .end = UsageDay(1), .resolution = UsageResolution::kMinute}),
              ElementsAre("+0m //// a=300 m=300 u=5 w=295 c=2.5 r=81920 f=700"));
}

// ann/train (dedicated H100), ann/dev (a 3g.40gb instance), bob/train
// (a share of an A100), bob/batch (a 1g.10gb instance), all in minute 0.
inline std::vector<UsageMinuteRow> FourVirtualClusters() {
  UsageMinuteRow ann_train = UsageRow(UsageEntity("ann", "train", "GPU-0"), UsageMinute(0), 16);
  UsageMinuteRow ann_dev = UsageRow(UsageEntity("ann", "dev", "GPU-1", 1), UsageMinute(0), 4);
  ann_dev.tier = gpu::Tier::kIsolated;
  ann_dev.mig_profile = "3g.40gb";
  ann_dev.allocated_gpu_seconds = ann_dev.measured_gpu_seconds = 8;
  ann_dev.waste_gpu_seconds = 4;
  ann_dev.reserved_memory_mib = 40960;
  UsageMinuteRow bob_train = UsageRow(UsageEntity("bob", "train", "GPU-2"), UsageMinute(0), 2);
  bob_train.tier = gpu::Tier::kShared;
  bob_train.model = "A100-40GB";
  bob_train.allocated_gpu_seconds = bob_train.measured_gpu_seconds = 4;
  bob_train.waste_gpu_seconds = 2;
  bob_train.reserved_memory_mib = 4096;
  bob_train.used_memory_mib = 1024;
  UsageMinuteRow bob_batch = UsageRow(UsageEntity("bob", "batch", "GPU-1", 2), UsageMinute(0), 1);
  bob_batch.tier = gpu::Tier::kIsolated;
  bob_batch.mig_profile = "1g.10gb";
  bob_batch.allocated_gpu_seconds = bob_batch.measured_gpu_seconds = 2;
  bob_batch.waste_gpu_seconds = 1;
  bob_batch.reserved_memory_mib = 10240;
  return {ann_train, ann_dev, bob_train, bob_batch};
}

TYPED_TEST_P(UsageContract, QueriesGroupByEachDimensionAndOrderByIt) {
  ASSERT_TRUE(this->Scrape("n1", FourVirtualClusters()).ok());
  struct Window {
    UsageResolution resolution;
    TimePoint end;
  };
  for (const Window window :
       {Window{UsageResolution::kMinute, UsageMinute(1)}, Window{UsageResolution::kHour, UsageHour(1)},
        Window{UsageResolution::kDay, UsageDay(1)}}) {
    SCOPED_TRACE(static_cast<int>(window.resolution));
    const auto by = [&](std::vector<UsageDimension> group_by) {
      return this->Lines(
          {.start = UsageDay(0), .end = window.end, .resolution = window.resolution, .group_by = std::move(group_by)});
    };
    EXPECT_THAT(by({}), ElementsAre("+0m //// a=44 m=44 u=23 w=21 c=1 r=81920 f=1024"));
    EXPECT_THAT(by({UsageDimension::kTenant}), ElementsAre("+0m ann//// a=38 m=38 u=20 w=18 c=0.5 r=81920 f=-",
                                                           "+0m bob//// a=6 m=6 u=3 w=3 c=0.5 r=10240 f=1024"));
    // A virtual cluster is named within its tenant: bob's train is not ann's.
    EXPECT_THAT(by({UsageDimension::kVcluster}), ElementsAre("+0m ann/dev/// a=8 m=8 u=4 w=4 c=0.25 r=40960 f=-",
                                                             "+0m ann/train/// a=30 m=30 u=16 w=14 c=0.25 r=81920 f=-",
                                                             "+0m bob/batch/// a=2 m=2 u=1 w=1 c=0.25 r=10240 f=-",
                                                             "+0m bob/train/// a=4 m=4 u=2 w=2 c=0.25 r=4096 f=1024"));
    EXPECT_THAT(by({UsageDimension::kTier}), ElementsAre("+0m //dedicated// a=30 m=30 u=16 w=14 c=0.25 r=81920 f=-",
                                                         "+0m //isolated// a=10 m=10 u=5 w=5 c=0.5 r=40960 f=-",
                                                         "+0m //shared// a=4 m=4 u=2 w=2 c=0.25 r=4096 f=1024"));
    EXPECT_THAT(by({UsageDimension::kModel}), ElementsAre("+0m ///A100-40GB/ a=4 m=4 u=2 w=2 c=0.25 r=4096 f=1024",
                                                          "+0m ///H100-80GB/ a=40 m=40 u=21 w=19 c=0.75 r=81920 f=-"));
    EXPECT_THAT(by({UsageDimension::kMigProfile}), ElementsAre("+0m //// a=34 m=34 u=18 w=16 c=0.5 r=81920 f=1024",
                                                               "+0m ////1g.10gb a=2 m=2 u=1 w=1 c=0.25 r=10240 f=-",
                                                               "+0m ////3g.40gb a=8 m=8 u=4 w=4 c=0.25 r=40960 f=-"));
    EXPECT_THAT(by({UsageDimension::kModel, UsageDimension::kTier}),
                ElementsAre("+0m //dedicated/H100-80GB/ a=30 m=30 u=16 w=14 c=0.25 r=81920 f=-",
                            "+0m //isolated/H100-80GB/ a=10 m=10 u=5 w=5 c=0.5 r=40960 f=-",
                            "+0m //shared/A100-40GB/ a=4 m=4 u=2 w=2 c=0.25 r=4096 f=1024"));
  }
}

TYPED_TEST_P(UsageContract, TheTenantFilterKeepsOneTenant) {
  ASSERT_TRUE(this->Scrape("n1", FourVirtualClusters()).ok());
  for (const UsageResolution resolution : {UsageResolution::kMinute, UsageResolution::kHour, UsageResolution::kDay}) {
    SCOPED_TRACE(static_cast<int>(resolution));
    EXPECT_THAT(this->Lines({.tenant = "bob",
                             .start = UsageDay(0),
                             .end = UsageDay(1),
                             .resolution = resolution,
                             .group_by = {UsageDimension::kVcluster}}),
                ElementsAre("+0m bob/batch/// a=2 m=2 u=1 w=1 c=0.25 r=10240 f=-",
                            "+0m bob/train/// a=4 m=4 u=2 w=2 c=0.25 r=4096 f=1024"));
    // Filtered, not grouped: the tenant's total.
    EXPECT_THAT(this->Lines({.tenant = "ann", .start = UsageDay(0), .end = UsageDay(1), .resolution = resolution}),
                ElementsAre("+0m //// a=38 m=38 u=20 w=18 c=0.5 r=81920 f=-"));
    EXPECT_THAT(this->Lines({.tenant = "carol", .start = UsageDay(0), .end = UsageDay(1), .resolution = resolution}),
                IsEmpty());
  }
}

TYPED_TEST_P(UsageContract, StepsCutTheWindowIntoBucketsFromItsStart) {
  const UsageEntityKey train = UsageEntity("ann", "train");
  std::vector<UsageMinuteRow> rows;
  for (const std::int64_t minute : {0, 60, 120, 300, 360}) rows.push_back(UsageRow(train, UsageMinute(minute), 30));
  ASSERT_TRUE(this->Scrape("n1", rows).ok());
  const auto hours = [&](TimePoint start, TimePoint end, std::chrono::seconds step) {
    return this->Lines({.start = start, .end = end, .resolution = UsageResolution::kHour, .step = step});
  };
  // Buckets of two hours; the hour at the window's end is not in it.
  EXPECT_THAT(
      hours(UsageHour(0), UsageHour(6), std::chrono::hours(2)),
      ElementsAre("+0m //// a=60 m=60 u=60 w=0 c=0.5 r=81920 f=-", "+120m //// a=30 m=30 u=30 w=0 c=0.25 r=81920 f=-",
                  "+240m //// a=30 m=30 u=30 w=0 c=0.25 r=81920 f=-"));
  // They start at the window's start, not on a grid of their own.
  EXPECT_THAT(hours(UsageHour(1), UsageHour(6), std::chrono::hours(2)),
              ElementsAre("+60m //// a=60 m=60 u=60 w=0 c=0.5 r=81920 f=-",
                          "+300m //// a=30 m=30 u=30 w=0 c=0.25 r=81920 f=-"));
  EXPECT_THAT(hours(UsageHour(1), UsageHour(7), std::chrono::seconds(0)),
              ElementsAre("+60m //// a=120 m=120 u=120 w=0 c=1 r=81920 f=-"));
  EXPECT_THAT(this->Lines({.start = UsageMinute(60), .end = UsageMinute(120), .resolution = UsageResolution::kMinute}),
              ElementsAre("+60m //// a=30 m=30 u=30 w=0 c=0.25 r=81920 f=-"));
  EXPECT_THAT(this->Lines({.start = UsageDay(0), .end = UsageDay(3), .resolution = UsageResolution::kDay}),
              ElementsAre("+0m //// a=150 m=150 u=150 w=0 c=1.25 r=81920 f=-"));
  EXPECT_THAT(this->Lines({.start = UsageDay(1), .end = UsageDay(3), .resolution = UsageResolution::kDay}), IsEmpty());
}

TYPED_TEST_P(UsageContract, AWindowOffItsGridIsRefusedNamingTheField) {
  const auto field_of = [&](const UsageQuery& q) -> std::string {
    const Status st = ToStatus(this->QueryUsage(q));
    EXPECT_EQ(st.code(), Code::kInvalidArgument) << st.ToString();
    return st.violations().empty() ? st.ToString() : st.violations()[0].field;
  };
  const auto minutes = [](TimePoint start, TimePoint end, std::chrono::seconds step = std::chrono::seconds(0)) {
    return UsageQuery{.start = start, .end = end, .resolution = UsageResolution::kMinute, .step = step};
  };
  EXPECT_EQ(field_of(minutes(UsageMinute(0) + std::chrono::seconds(1), UsageMinute(2))), "start");
  EXPECT_EQ(field_of(minutes(UsageMinute(0), UsageMinute(2) + std::chrono::nanoseconds(1))), "end");
  EXPECT_EQ(field_of(minutes(UsageMinute(2), UsageMinute(2))), "end");
  EXPECT_EQ(field_of(minutes(UsageMinute(2), UsageMinute(1))), "end");
  EXPECT_EQ(field_of(minutes(UsageMinute(0), UsageMinute(2), std::chrono::seconds(90))), "step");
  EXPECT_EQ(field_of(minutes(UsageMinute(0), UsageMinute(2), std::chrono::seconds(-60))), "step");
  const auto hours = [](TimePoint start, TimePoint end, std::chrono::seconds step = std::chrono::seconds(0)) {
    return UsageQuery{.start = start, .end = end, .resolution = UsageResolution::kHour, .step = step};
  };
  EXPECT_EQ(field_of(hours(UsageMinute(30), UsageHour(2))), "start");
  EXPECT_EQ(field_of(hours(UsageHour(0), UsageMinute(90))), "end");
  EXPECT_EQ(field_of(hours(UsageHour(0), UsageHour(2), std::chrono::minutes(1))), "step");
  const auto days = [](TimePoint start, TimePoint end, std::chrono::seconds step = std::chrono::seconds(0)) {
    return UsageQuery{.start = start, .end = end, .resolution = UsageResolution::kDay, .step = step};
  };
  EXPECT_EQ(field_of(days(UsageHour(1), UsageDay(2))), "start");
  EXPECT_EQ(field_of(days(UsageDay(0), UsageHour(25))), "end");
  EXPECT_EQ(field_of(days(UsageDay(0), UsageDay(2), std::chrono::hours(1))), "step");
  // On the grid, they are answered.
  EXPECT_TRUE(this->QueryUsage(days(UsageDay(0), UsageDay(4), std::chrono::days(2))).ok());
  EXPECT_TRUE(this->QueryUsage(hours(UsageHour(0), UsageDay(1), std::chrono::hours(3))).ok());

  const auto pool_field_of = [&](const UsagePoolQuery& q) -> std::string {
    const Status st = ToStatus(this->QueryUsagePool(q));
    EXPECT_EQ(st.code(), Code::kInvalidArgument) << st.ToString();
    return st.violations().empty() ? st.ToString() : st.violations()[0].field;
  };
  EXPECT_EQ(pool_field_of({.start = UsageHour(1), .end = UsageDay(1)}), "start");
  EXPECT_EQ(pool_field_of({.start = UsageDay(1), .end = UsageDay(1)}), "end");
  EXPECT_EQ(pool_field_of({.start = UsageMinute(0),
                           .end = UsageMinute(10),
                           .resolution = UsageResolution::kMinute,
                           .step = std::chrono::seconds(30)}),
            "step");
}

TYPED_TEST_P(UsageContract, ThePoolAddsUpPerMinuteHourAndDayAndByModel) {
  // Two scrapes of n1's two H100s in minute 0, and n2's A100 in minutes 0 and 61.
  ASSERT_TRUE(this->Scrape("n1", {},
                           {UsagePoolRow("n1", "GPU-0", "H100-80GB", UsageMinute(0), 30, 30, 15),
                            UsagePoolRow("n1", "GPU-1", "H100-80GB", UsageMinute(0), 30, 0, 0)})
                  .ok());
  ASSERT_TRUE(this->Scrape("n1", {},
                           {UsagePoolRow("n1", "GPU-0", "H100-80GB", UsageMinute(0), 30, 30, 5),
                            UsagePoolRow("n1", "GPU-1", "H100-80GB", UsageMinute(0), 30, 0, 2)})
                  .ok());
  ASSERT_TRUE(this->Scrape("n2", {},
                           {UsagePoolRow("n2", "GPU-9", "A100-40GB", UsageMinute(0), 30, 15, 10),
                            UsagePoolRow("n2", "GPU-9", "A100-40GB", UsageMinute(61), 30, 30, 30)})
                  .ok());
  EXPECT_THAT(this->PoolLines({.start = UsageMinute(0), .end = UsageMinute(2), .resolution = UsageResolution::kMinute}),
              ElementsAre("+0m  cap=150 res=75 used=32"));
  EXPECT_THAT(this->PoolLines({.start = UsageMinute(0),
                               .end = UsageMinute(62),
                               .resolution = UsageResolution::kMinute,
                               .step = std::chrono::minutes(1),
                               .by_model = true}),
              ElementsAre("+0m A100-40GB cap=30 res=15 used=10", "+0m H100-80GB cap=120 res=60 used=22",
                          "+61m A100-40GB cap=30 res=30 used=30"));
  EXPECT_THAT(this->PoolLines({.start = UsageHour(0),
                               .end = UsageHour(2),
                               .resolution = UsageResolution::kHour,
                               .step = std::chrono::hours(1),
                               .by_model = true}),
              ElementsAre("+0m A100-40GB cap=30 res=15 used=10", "+0m H100-80GB cap=120 res=60 used=22",
                          "+60m A100-40GB cap=30 res=30 used=30"));
  EXPECT_THAT(this->PoolLines({.start = UsageDay(0), .end = UsageDay(1)}), ElementsAre("+0m  cap=180 res=105 used=62"));
}

TYPED_TEST_P(UsageContract, AScrapeReplacesItsNodesIdleStatesAndNoOthers) {
  const UsageIdleState train{.entity = UsageEntity("ann", "train"),
                             .tier = gpu::Tier::kDedicated,
                             .window_start = At(kUsageDay + 30, 999'999'999),
                             .window_activity_max = 0.0078125,
                             .window_used_memory_mib = 2048,
                             .idle_ms = 7'200'000,
                             .holding_memory = true,
                             .updated = At(kUsageDay + 31, 1'001)};
  const UsageIdleState dev{.entity = UsageEntity("ann", "dev", "GPU-1", 3),
                           .tier = gpu::Tier::kIsolated,
                           .window_start = At(kUsageDay + 30),
                           .idle_ms = 0,
                           .updated = At(kUsageDay + 31)};
  const UsageIdleState other_node{.entity = UsageEntity("bob", "batch", "GPU-9", -1, "n2"),
                                  .tier = gpu::Tier::kShared,
                                  .window_start = At(kUsageDay + 30),
                                  .window_activity_max = 0.5,
                                  .idle_ms = 30'000,
                                  .updated = At(kUsageDay + 32)};
  ASSERT_TRUE(this->Scrape("n1", {}, {}, {train, dev}).ok());
  ASSERT_TRUE(this->Scrape("n2", {}, {}, {other_node}).ok());
  const auto of_node = [&](const std::string& node) {
    return this->IdleLines([&](Tx& tx) { return tx.Usage().IdleStates(node); });
  };
  const auto all = [&] { return this->IdleLines([](Tx& tx) { return tx.Usage().AllIdleStates(); }); };
  // By entity; instants at microseconds.
  UsageIdleState stored_train = train;
  stored_train.window_start = AtMicros(kUsageDay + 30, 999'999'999);
  stored_train.updated = AtMicros(kUsageDay + 31, 1'001);
  EXPECT_THAT(of_node("n1"), ElementsAre(UsageIdleLine(dev), UsageIdleLine(stored_train)));
  EXPECT_THAT(all(), ElementsAre(UsageIdleLine(dev), UsageIdleLine(stored_train), UsageIdleLine(other_node)));

  // dev is no longer held: n1's next scrape has only train's state.
  UsageIdleState later = train;
  later.window_start = At(kUsageDay + 60);
  later.window_used_memory_mib = std::nullopt;
  later.idle_ms = 7'230'000;
  later.holding_memory = false;
  later.updated = At(kUsageDay + 61);
  ASSERT_TRUE(this->Scrape("n1", {}, {}, {later}).ok());
  EXPECT_THAT(of_node("n1"), ElementsAre(UsageIdleLine(later)));
  EXPECT_THAT(of_node("n2"), ElementsAre(UsageIdleLine(other_node)));
  EXPECT_THAT(all(), ElementsAre(UsageIdleLine(later), UsageIdleLine(other_node)));

  ASSERT_TRUE(this->Scrape("n1", {}).ok());
  EXPECT_THAT(of_node("n1"), IsEmpty());
  EXPECT_THAT(all(), ElementsAre(UsageIdleLine(other_node)));
}

TYPED_TEST_P(UsageContract, PricesAreOrderedAndOnceSetNeverChange) {
  const GpuPrice h100{.model = "H100-80GB",
                      .tier = gpu::Tier::kDedicated,
                      .per_gpu_hour = 2.5,
                      .valid_from = At(kUsageDay, 123'456'789)};
  GpuPrice h100_before = h100;
  h100_before.per_gpu_hour = 3;
  h100_before.valid_from = At(kUsageDay - 86400);
  GpuPrice share = h100;
  share.tier = gpu::Tier::kShared;
  share.per_gpu_hour = 0.1 + 0.2;  // not a binary fraction: its every bit goes in and comes back
  GpuPrice instance = h100;
  instance.tier = gpu::Tier::kIsolated;
  instance.mig_profile = "3g.40gb";
  instance.per_gpu_hour = 1.25;
  GpuPrice every_instance = instance;
  every_instance.mig_profile = "";
  every_instance.per_gpu_hour = 0;
  GpuPrice a100 = h100;
  a100.model = "A100-40GB";
  a100.per_gpu_hour = 1.5;
  for (const GpuPrice& p : {h100, h100_before, share, instance, every_instance, a100}) {
    const Status st = this->PutPrice(p);
    ASSERT_TRUE(st.ok()) << st.ToString();
  }
  const auto stored = [](GpuPrice p) {
    p.valid_from = TimePoint(std::chrono::floor<std::chrono::microseconds>(p.valid_from.time_since_epoch()));
    return p;
  };
  // By model, tier (its name), profile and time.
  const std::vector<GpuPrice> ordered = {stored(a100),           stored(h100_before), stored(h100),
                                         stored(every_instance), stored(instance),    stored(share)};
  auto prices = this->Prices();
  ASSERT_TRUE(prices.ok()) << prices.status().ToString();
  EXPECT_EQ(*prices, ordered);

  // The same price again is no change.
  for (const GpuPrice& p : {h100, share}) EXPECT_TRUE(this->PutPrice(p).ok()) << p.per_gpu_hour;
  // Another rate from the same instant would change past bills.
  GpuPrice changed = h100;
  changed.per_gpu_hour = 2.75;
  const Status refused = this->PutPrice(changed);
  EXPECT_EQ(refused.code(), Code::kAlreadyExists) << refused.ToString();
  ASSERT_EQ(refused.violations().size(), 1u);
  EXPECT_EQ(refused.violations()[0].field, "per_gpu_hour");
  for (const double bad : {-0.5, std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity()}) {
    GpuPrice p = h100;
    p.valid_from = At(kUsageDay + 86400);
    p.per_gpu_hour = bad;
    const Status st = this->PutPrice(p);
    EXPECT_EQ(st.code(), Code::kInvalidArgument) << bad << ": " << st.ToString();
    EXPECT_THAT(st.violations(), ElementsAre(FieldViolation{"per_gpu_hour", "must be a finite number, not negative"}));
  }
  prices = this->Prices();
  ASSERT_TRUE(prices.ok());
  EXPECT_EQ(*prices, ordered);

  // A new rate is a new row from a later instant.
  changed.valid_from = At(kUsageDay + 86400);
  ASSERT_TRUE(this->PutPrice(changed).ok());
  prices = this->Prices();
  ASSERT_TRUE(prices.ok());
  ASSERT_EQ(prices->size(), ordered.size() + 1);
  EXPECT_EQ((*prices)[3], changed);
}

TYPED_TEST_P(UsageContract, RetentionDeletesOldMinutesOldestFirstAndKeepsHoursAndDays) {
  const UsageEntityKey train = UsageEntity("ann", "train");
  ASSERT_TRUE(this->Scrape("n1",
                           {UsageRow(train, UsageMinute(0), 1), UsageRow(train, UsageMinute(1), 2),
                            UsageRow(train, UsageMinute(2), 4)},
                           {UsagePoolRow("n1", "GPU-0", "H100-80GB", UsageMinute(0), 30, 30, 1),
                            UsagePoolRow("n1", "GPU-0", "H100-80GB", UsageMinute(2), 30, 30, 4)})
                  .ok());
  const auto pool_minutes = [&] {
    return this->PoolLines({.start = UsageDay(0),
                            .end = UsageDay(1),
                            .resolution = UsageResolution::kMinute,
                            .step = std::chrono::minutes(1)});
  };
  const auto deleted = this->DeleteMinutesBefore(UsageMinute(2), 0);
  EXPECT_EQ(deleted.status().code(), Code::kInvalidArgument);
  EXPECT_THAT(deleted.status().violations(), ElementsAre(FieldViolation{"limit", "must be positive"}));

  // The entities' minutes first, the oldest first.
  auto first = this->DeleteMinutesBefore(UsageMinute(2), 1);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_EQ(*first, 1);
  EXPECT_THAT(this->MinuteLines(),
              ElementsAre("+1m ann/train/dedicated/H100-80GB/ a=30 m=30 u=2 w=28 c=0.25 r=81920 f=-",
                          "+2m ann/train/dedicated/H100-80GB/ a=30 m=30 u=4 w=26 c=0.25 r=81920 f=-"));
  EXPECT_THAT(pool_minutes(), ElementsAre("+0m  cap=30 res=30 used=1", "+2m  cap=30 res=30 used=4"));

  // Then the pool's; the minute at the cutoff stays.
  auto rest = this->DeleteMinutesBefore(UsageMinute(2), 1000);
  ASSERT_TRUE(rest.ok()) << rest.status().ToString();
  EXPECT_EQ(*rest, 2);
  EXPECT_THAT(this->MinuteLines(),
              ElementsAre("+2m ann/train/dedicated/H100-80GB/ a=30 m=30 u=4 w=26 c=0.25 r=81920 f=-"));
  EXPECT_THAT(pool_minutes(), ElementsAre("+2m  cap=30 res=30 used=4"));
  auto none = this->DeleteMinutesBefore(UsageMinute(2), 1000);
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(*none, 0);

  // Hours and days still hold every minute.
  for (const UsageResolution resolution : {UsageResolution::kHour, UsageResolution::kDay}) {
    EXPECT_THAT(this->Lines({.start = UsageDay(0), .end = UsageDay(1), .resolution = resolution}),
                ElementsAre("+0m //// a=90 m=90 u=7 w=83 c=0.75 r=81920 f=-"));
    EXPECT_THAT(this->PoolLines({.start = UsageDay(0), .end = UsageDay(1), .resolution = resolution}),
                ElementsAre("+0m  cap=60 res=60 used=5"));
  }
}

TYPED_TEST_P(UsageContract, ADeletedTenantsUsageIsKept) {
  ASSERT_TRUE(this->Insert(MakeTenant("gone")).ok());
  ASSERT_TRUE(this->Scrape("n1", {UsageRow(UsageEntity("gone", "train"), UsageMinute(0), 8)}).ok());
  const Status deleted = this->Write([](Tx& tx) { return tx.Tenants().Delete("gone", 1); });
  ASSERT_TRUE(deleted.ok()) << deleted.ToString();
  EXPECT_EQ(this->GetTenant("gone").status().code(), Code::kNotFound);
  EXPECT_THAT(this->Lines({.tenant = "gone",
                           .start = UsageDay(0),
                           .end = UsageDay(1),
                           .resolution = UsageResolution::kDay,
                           .group_by = {UsageDimension::kVcluster}}),
              ElementsAre("+0m gone/train/// a=30 m=30 u=8 w=22 c=0.25 r=81920 f=-"));
}

TYPED_TEST_P(UsageContract, ABadBatchIsRefusedNamingTheFieldAndWritesNothing) {
  const UsageEntityKey train = UsageEntity("ann", "train");
  const UsageMinuteRow good = UsageRow(UsageEntity("ann", "dev", "GPU-1"), UsageMinute(0), 10);
  const auto minute = [&](const std::function<void(UsageMinuteRow&)>& spoil) {
    UsageMinuteRow r = UsageRow(train, UsageMinute(0), 10);
    spoil(r);
    return UsageScrapeBatch{.node = "n1", .cursor = At(kUsageDay), .minutes = {good, r}};
  };
  const auto pool = [&](const std::function<void(UsagePoolMinuteRow&)>& spoil) {
    UsagePoolMinuteRow r = UsagePoolRow("n1", "GPU-0", "H100-80GB", UsageMinute(0), 30, 30, 10);
    spoil(r);
    return UsageScrapeBatch{.node = "n1", .cursor = At(kUsageDay), .minutes = {good}, .pool = {r}};
  };
  const auto idle = [&](const std::function<void(UsageIdleState&)>& spoil) {
    UsageIdleState s{.entity = train, .tier = gpu::Tier::kDedicated, .idle_ms = 30'000};
    spoil(s);
    return UsageScrapeBatch{.node = "n1", .cursor = At(kUsageDay), .minutes = {good}, .idle = {s}};
  };
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  const std::pair<UsageScrapeBatch, std::string> refused[] = {
      {minute([](UsageMinuteRow& r) { r.used_gpu_seconds = -1; }), "minutes.used_gpu_seconds"},
      {minute([&](UsageMinuteRow& r) { r.cost = nan; }), "minutes.cost"},
      {minute([&](UsageMinuteRow& r) { r.weight = inf; }), "minutes.weight"},
      {minute([](UsageMinuteRow& r) { r.allocated_gpu_seconds = -30; }), "minutes.allocated_gpu_seconds"},
      {minute([](UsageMinuteRow& r) { r.measured_gpu_seconds = -30; }), "minutes.measured_gpu_seconds"},
      {minute([](UsageMinuteRow& r) { r.waste_gpu_seconds = -0.5; }), "minutes.waste_gpu_seconds"},
      {minute([](UsageMinuteRow& r) { r.activity_max = -0.5; }), "minutes.activity_max"},
      {minute([](UsageMinuteRow& r) { r.reserved_memory_mib = -1; }), "minutes.reserved_memory_mib"},
      {minute([](UsageMinuteRow& r) { r.used_memory_mib = -1; }), "minutes.used_memory_mib"},
      {minute([](UsageMinuteRow& r) { r.samples = -1; }), "minutes.samples"},
      {minute([](UsageMinuteRow& r) { r.entity.gi_id = -2; }), "minutes.entity.gi_id"},
      {minute([](UsageMinuteRow& r) { r.minute += std::chrono::seconds(30); }), "minutes.minute"},
      {minute([](UsageMinuteRow& r) { r.entity.node = "n2"; }), "minutes.entity.node"},
      {minute([&](UsageMinuteRow& r) { r.entity = good.entity; }), "minutes"},
      {pool([](UsagePoolMinuteRow& r) { r.capacity_gpu_seconds = -30; }), "pool.capacity_gpu_seconds"},
      {pool([](UsagePoolMinuteRow& r) { r.reserved_gpu_seconds = -30; }), "pool.reserved_gpu_seconds"},
      {pool([&](UsagePoolMinuteRow& r) { r.used_gpu_seconds = nan; }), "pool.used_gpu_seconds"},
      {pool([](UsagePoolMinuteRow& r) { r.node = "n2"; }), "pool.node"},
      {idle([](UsageIdleState& s) { s.idle_ms = -1; }), "idle.idle_ms"},
      {idle([](UsageIdleState& s) { s.entity.gi_id = -5; }), "idle.entity.gi_id"},
      {idle([](UsageIdleState& s) { s.window_activity_max = -1; }), "idle.window_activity_max"},
      {idle([&](UsageIdleState& s) { s.window_used_memory_mib = inf; }), "idle.window_used_memory_mib"},
      {idle([](UsageIdleState& s) { s.entity.node = "n2"; }), "idle.entity.node"},
      {{.cursor = At(kUsageDay)}, "node"},
  };
  for (const auto& row : refused) {
    // Named copies: clang 14's lambdas cannot capture structured bindings.
    const auto& batch = row.first;
    const auto& field = row.second;
    // Committed anyway: the refused batch must have left nothing to commit.
    const Status committed = this->Write([&](Tx& tx) {
      const Status st = tx.Usage().Record(batch);
      EXPECT_EQ(st.code(), Code::kInvalidArgument) << field << ": " << st.ToString();
      EXPECT_EQ(st.violations().empty() ? "" : st.violations()[0].field, field) << st.ToString();
      return Status::Ok();
    });
    ASSERT_TRUE(committed.ok()) << committed.ToString();
  }
  UsageScrapeBatch twice = pool([](UsagePoolMinuteRow&) {});
  twice.pool.push_back(twice.pool[0]);
  EXPECT_EQ(this->Record(twice).violations().at(0).field, "pool");
  twice = idle([](UsageIdleState&) {});
  twice.idle.push_back(twice.idle[0]);
  EXPECT_EQ(this->Record(twice).violations().at(0).field, "idle");

  auto cursor = this->CursorOf("n1");
  ASSERT_TRUE(cursor.ok());
  EXPECT_EQ(*cursor, std::nullopt);
  EXPECT_THAT(this->MinuteLines(), IsEmpty());
  EXPECT_THAT(this->Lines({.start = UsageDay(0), .end = UsageDay(1)}), IsEmpty());
  EXPECT_THAT(this->PoolLines({.start = UsageDay(0), .end = UsageDay(1)}), IsEmpty());
  EXPECT_THAT(this->IdleLines([](Tx& tx) { return tx.Usage().AllIdleStates(); }), IsEmpty());
  // The good row alone goes in.
  ASSERT_TRUE(this->Record({.node = "n1", .cursor = At(kUsageDay), .minutes = {good}}).ok());
  EXPECT_THAT(this->MinuteLines(),
              ElementsAre("+0m ann/dev/dedicated/H100-80GB/ a=30 m=30 u=10 w=20 c=0.25 r=81920 f=-"));
}

REGISTER_TYPED_TEST_SUITE_P(UsageContract, TheCursorMovesOnlyFromWhereItWasRead,
                            ScrapesOfOneMinuteAddUpInItsMinuteHourAndDay,
                            MemoryKeepsTheLargestAndIsUnknownOnlyWhenNeverSampled,
                            QueriesGroupByEachDimensionAndOrderByIt, TheTenantFilterKeepsOneTenant,
                            StepsCutTheWindowIntoBucketsFromItsStart, AWindowOffItsGridIsRefusedNamingTheField,
                            ThePoolAddsUpPerMinuteHourAndDayAndByModel, AScrapeReplacesItsNodesIdleStatesAndNoOthers,
                            PricesAreOrderedAndOnceSetNeverChange,
                            RetentionDeletesOldMinutesOldestFirstAndKeepsHoursAndDays, ADeletedTenantsUsageIsKept,
                            ABadBatchIsRefusedNamingTheFieldAndWritesNothing);

}  // namespace septa::core::contract
