#include "tenancy/usage/node_accounting.h"

#include <gtest/gtest.h>

#include "tenancy/usage/idle_run.h"
#include "tests/unit/tenancy/usage/usage_samples.h"

namespace septa::tenancy::usage {
namespace {

using namespace septa::tenancy::usage::testing;  // NOLINT: the tests' vocabulary
using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr char kAcctNode[] = "gpu-1";
constexpr char kAcctUuid[] = "GPU-1";
constexpr char kAcctModel[] = "NVIDIA H100 80GB HBM3";

NodeAccountingInput Dedicated(std::optional<double> cursor_s, double at_s, std::optional<double> gr) {
  NodeAccountingInput input{.node = kAcctNode,
                            .at = At(at_s),
                            .gpus = {{.uuid = kAcctUuid, .model = kAcctModel}},
                            .held = {Whole("acme", gpu::Tier::kDedicated, kAcctNode, kAcctUuid, {})},
                            .prices = {{.model = kAcctModel, .tier = gpu::Tier::kDedicated, .per_gpu_hour = 3.6}}};
  if (cursor_s) input.cursor = At(*cursor_s);
  if (gr) input.scrape = NodeScrape{.node = kAcctNode, .at = At(at_s), .samples = {Gr(kAcctNode, kAcctUuid, *gr)}};
  return input;
}

NodeAccounting MustAccount(const NodeAccountingInput& input, const NodeAccountingSettings& settings = {}) {
  auto out = AccountNode(input, settings);
  EXPECT_TRUE(out.ok()) << out.status().ToString();
  return out.ok() ? *std::move(out) : NodeAccounting{};
}

struct Sums {
  double allocated = 0, measured = 0, used = 0, waste = 0, cost = 0;
};
Sums Sum(const std::vector<UsageMinuteRow>& rows) {
  Sums s;
  for (const auto& r : rows) {
    s.allocated += r.allocated_gpu_seconds;
    s.measured += r.measured_gpu_seconds;
    s.used += r.used_gpu_seconds;
    s.waste += r.waste_gpu_seconds;
    s.cost += r.cost;
  }
  return s;
}

TEST(nodeAccounting, ANodeNeverAccountedBillsItsLastScrapeInterval) {
  const NodeAccounting out = MustAccount(Dedicated(std::nullopt, 90, 0.5));
  EXPECT_EQ(out.accounted, Between(60, 90));
  const Sums s = Sum(out.minutes);
  EXPECT_DOUBLE_EQ(s.allocated, 30);
  EXPECT_DOUBLE_EQ(s.measured, 30);
  EXPECT_DOUBLE_EQ(s.used, 15);
  EXPECT_DOUBLE_EQ(s.waste, 15);
  EXPECT_NEAR(s.cost, 3.6 * 30 / 3600, 1e-12);  // held is billed, used or not
  ASSERT_EQ(out.minutes.size(), 1u);
  EXPECT_EQ(out.minutes[0].entity,
            (UsageEntityKey{.tenant = "acme", .vcluster = "dev", .node = kAcctNode, .gpu_uuid = kAcctUuid}));
  EXPECT_EQ(out.minutes[0].minute, At(60));
  EXPECT_EQ(out.minutes[0].model, kAcctModel);
}

TEST(nodeAccounting, ConsecutiveScrapesFromTheCursorAddUpToTheTimeHeld) {
  Sums total;
  std::optional<double> cursor = 0;
  for (double t = 30; t <= 600; t += 30) {
    const NodeAccounting out = MustAccount(Dedicated(cursor, t, 0.25));
    EXPECT_EQ(out.accounted.start, At(*cursor));
    const Sums s = Sum(out.minutes);
    total.allocated += s.allocated;
    total.used += s.used;
    cursor = t;
  }
  EXPECT_DOUBLE_EQ(total.allocated, 600);
  EXPECT_DOUBLE_EQ(total.used, 150);
}

TEST(nodeAccounting, AFailedScrapeIsAllocatedButNotMeasuredNeverIdle) {
  const NodeAccounting out = MustAccount(Dedicated(0, 30, std::nullopt));
  const Sums s = Sum(out.minutes);
  EXPECT_DOUBLE_EQ(s.allocated, 30);
  EXPECT_DOUBLE_EQ(s.measured, 0);
  EXPECT_DOUBLE_EQ(s.waste, 0);
  ASSERT_EQ(out.idle.size(), 1u);
  EXPECT_EQ(out.idle[0].idle_ms, 0);
}

TEST(nodeAccounting, AGapLongerThanTheMaximumIsSkippedAndSaid) {
  const NodeAccounting out = MustAccount(Dedicated(0, 3600, 1.0), {.max_gap = milliseconds(600'000)});
  EXPECT_EQ(out.accounted, Between(3000, 3600));
  EXPECT_EQ(out.skipped, milliseconds(3'000'000));
  EXPECT_DOUBLE_EQ(Sum(out.minutes).allocated, 600);
  EXPECT_DOUBLE_EQ(Sum(out.minutes).measured, 30);  // the scrape measures its own interval only
}

TEST(nodeAccounting, ACursorAheadOfThisClockAccountsNothing) {
  const NodeAccounting out = MustAccount(Dedicated(120, 90, 1.0));
  EXPECT_TRUE(out.minutes.empty());
  EXPECT_TRUE(out.pool.empty());
  EXPECT_EQ(out.accounted, TimeRange{});
}

TEST(nodeAccounting, TenantsPlusTheUnreservedPoolAreTheNodesCapacity) {
  NodeAccountingInput input = Dedicated(0, 90, 0.5);
  input.gpus.push_back({.uuid = "GPU-2", .model = kAcctModel});
  input.held.push_back(Share("beta", kAcctNode, "GPU-2", 250, {}));
  const NodeAccounting out = MustAccount(input);
  double capacity = 0, reserved = 0;
  for (const auto& row : out.pool) {
    capacity += row.capacity_gpu_seconds;
    reserved += row.reserved_gpu_seconds;
  }
  EXPECT_DOUBLE_EQ(capacity, 2 * 90);
  EXPECT_DOUBLE_EQ(reserved, Sum(out.minutes).allocated);
  EXPECT_DOUBLE_EQ(reserved, 90 + 0.25 * 90);
}

TEST(nodeAccounting, ASharedGpuUsedByOneOfTwoTenantsIsAttributedOnce) {
  NodeAccountingInput input{
      .node = kAcctNode,
      .at = At(30),
      .gpus = {{.uuid = kAcctUuid, .model = kAcctModel}},
      .held = {Share("x", kAcctNode, kAcctUuid, 500, {}), Share("y", kAcctNode, kAcctUuid, 500, {})}};
  input.scrape = NodeScrape{
      .node = kAcctNode,
      .at = At(30),
      .samples = {Gr(kAcctNode, kAcctUuid, 0.486), PerPod(DcgmSignal::kGpuUtil, kAcctNode, kAcctUuid, "x-dev", 0.9),
                  PerPod(DcgmSignal::kGpuUtil, kAcctNode, kAcctUuid, "y-dev", 0)}};
  const NodeAccounting out = MustAccount(input);
  ASSERT_EQ(out.minutes.size(), 2u);
  for (const auto& row : out.minutes) {
    EXPECT_DOUBLE_EQ(row.used_gpu_seconds, row.entity.tenant == "x" ? 0.486 * 30 : 0) << row.entity.tenant;
  }
  ASSERT_EQ(out.pool.size(), 1u);
  EXPECT_DOUBLE_EQ(out.pool[0].used_gpu_seconds, Sum(out.minutes).used);  // conservation
}

TEST(nodeAccounting, AMigInstanceIsKeyedByItsGpuInstanceId) {
  NodeAccountingInput input{.node = kAcctNode,
                            .at = At(30),
                            .gpus = {{.uuid = kAcctUuid, .model = kAcctModel}},
                            .held = {Mig("acme", kAcctNode, kAcctUuid, 2, 3, {})}};
  input.scrape = NodeScrape{
      .node = kAcctNode, .at = At(30), .samples = {Gr(kAcctNode, kAcctUuid, 1.0, 2), Gr(kAcctNode, kAcctUuid, 1.0, 1)}};
  const NodeAccounting out = MustAccount(input);
  ASSERT_EQ(out.minutes.size(), 1u);
  EXPECT_EQ(out.minutes[0].entity.gi_id, 2);
  EXPECT_DOUBLE_EQ(out.minutes[0].used_gpu_seconds, 3.0 / 7 * 30);
  EXPECT_EQ(out.unheld_activity_samples, 1);  // GI 1 is busy and nobody holds it
}

TEST(nodeAccounting, PricesAreDatedPerProfileOrWeightedAndNeverRetroactive) {
  const std::vector<GpuPrice> prices = {
      {.model = kAcctModel, .tier = gpu::Tier::kIsolated, .per_gpu_hour = 7, .valid_from = At(0)},
      {.model = kAcctModel, .tier = gpu::Tier::kIsolated, .per_gpu_hour = 14, .valid_from = At(3600)},
      {.model = kAcctModel,
       .tier = gpu::Tier::kIsolated,
       .mig_profile = "1g.10gb",
       .per_gpu_hour = 2,
       .valid_from = At(0)},
  };
  EXPECT_DOUBLE_EQ(HourlyRateOf(prices, kAcctModel, gpu::Tier::kIsolated, "3g.40gb", 3.0 / 7, At(60)), 3);
  EXPECT_DOUBLE_EQ(HourlyRateOf(prices, kAcctModel, gpu::Tier::kIsolated, "3g.40gb", 3.0 / 7, At(3600)), 6);
  EXPECT_DOUBLE_EQ(HourlyRateOf(prices, kAcctModel, gpu::Tier::kIsolated, "1g.10gb", 1.0 / 7, At(7200)), 2);
  EXPECT_DOUBLE_EQ(HourlyRateOf(prices, kAcctModel, gpu::Tier::kDedicated, "", 1, At(60)), 0);
  EXPECT_DOUBLE_EQ(HourlyRateOf(prices, kAcctModel, gpu::Tier::kIsolated, "3g.40gb", 3.0 / 7, At(-1)), 0);
}

TEST(nodeAccounting, AnIdleRunCarriesAcrossScrapesAndEndsOnActivity) {
  std::vector<UsageIdleState> idle;
  std::optional<double> cursor;
  const auto scrape = [&](double t, std::optional<double> gr) {
    NodeAccountingInput input = Dedicated(cursor, t, gr);
    input.idle = idle;
    if (input.scrape) input.scrape->samples.push_back(Fb(kAcctNode, kAcctUuid, 21842));
    const NodeAccounting out = MustAccount(input);
    cursor = t;
    idle = out.idle;
    EXPECT_EQ(idle.size(), 1u);
    return idle.empty() ? UsageIdleState{} : idle[0];
  };
  for (double t = 30; t <= 300; t += 30) scrape(t, 0.0);
  EXPECT_EQ(scrape(330, 0.0).idle_ms, 300'000);  // ten windows closed, the eleventh open
  EXPECT_TRUE(idle[0].holding_memory);
  EXPECT_EQ(scrape(360, std::nullopt).idle_ms, 300'000);  // a missed scrape neither adds nor ends
  EXPECT_EQ(scrape(390, 0.0).idle_ms, 330'000);
  EXPECT_EQ(scrape(420, 0.5).idle_ms, 360'000);  // the active window is open...
  EXPECT_EQ(scrape(450, 0.0).idle_ms, 0);        // ...and ends the run once closed
  EXPECT_FALSE(idle[0].holding_memory);
}

TEST(idleRun, ASecondScrapeOfTheOpenWindowKeepsItsLargestActivity) {
  const UsageSettings settings;
  UsageIdleState state = AdvanceIdleRun(std::nullopt, {{.start = At(0), .activity_max = 0.5}}, settings, At(10));
  state = AdvanceIdleRun(state, {{.start = At(0), .activity_max = 0}}, settings, At(20));
  EXPECT_DOUBLE_EQ(state.window_activity_max, 0.5);
  state = AdvanceIdleRun(state, {{.start = At(30), .activity_max = 0}}, settings, At(40));
  EXPECT_EQ(state.idle_ms, 0);
  state = AdvanceIdleRun(state, {{.start = At(-30), .activity_max = 0}, {.start = At(60), .activity_max = 0}}, settings,
                         At(70));
  EXPECT_EQ(state.idle_ms, 30'000);  // the older window is not counted again
  EXPECT_EQ(state.updated, At(70));
}

}  // namespace
}  // namespace septa::tenancy::usage
