// Usage accounting and its reports on the FakeStore (the same contract as
// PostgreSQL: tests/unit/services/store/usage_contract.h): scrapes accounted
// from the node's cursor into what the reports read, once whatever retries
// or skewed clocks do; who may read what; every refused field named;
// hoarders at their threshold and never from a node nobody scrapes.
#include <gtest/gtest.h>

#include "tests/unit/services/core/usage_fixture.h"

namespace septa::core {
namespace {

using std::chrono::minutes;
using std::chrono::seconds;

TEST_F(UsageTest, ScrapesAccountedFromTheCursorAreWhatTheTenantsReportSays) {
  ASSERT_TRUE(
      service.CreatePrice(Admin(), {.model = "A100-80GB", .tier = gpu::Tier::kDedicated, .per_gpu_hour = 3.6}).ok());
  Run(minutes(10), 0.5);
  const UsageReport acme = MustReport("acme", minutes(10));
  ASSERT_EQ(acme.items.size(), 1u);
  const UsageItem& item = acme.items[0];
  EXPECT_EQ(acme.resolution, "minute");
  EXPECT_NEAR(item.allocated_gpu_hours, 10.0 / 60, 1e-12);
  EXPECT_NEAR(item.coverage, 1, 1e-12);
  EXPECT_NEAR(item.used_gpu_hours, 5.0 / 60, 1e-12);
  EXPECT_NEAR(item.waste_gpu_hours, 5.0 / 60, 1e-12);
  EXPECT_NEAR(*item.efficiency, 0.5, 1e-12);
  EXPECT_NEAR(item.cost, 3.6 * 10 / 60, 1e-12);
  EXPECT_EQ(acme.total.allocated_gpu_hours, item.allocated_gpu_hours);

  const UsageReport beta = MustReport("beta", minutes(10));
  ASSERT_EQ(beta.items.size(), 1u);
  EXPECT_EQ(beta.items[0].used_gpu_hours, 0);
  EXPECT_NEAR(*beta.items[0].memory_over_request, gpu::Catalog::Default().Find("A100-80GB")->memory_mib / 20000.0,
              1e-9);
}

TEST_F(UsageTest, ARetryOrASkewedClockAddsNothingAndAMissedScrapeLowersCoverage) {
  Run(minutes(1), 1.0);
  const NodeAccountingResult again = Account(1.0);  // the same instant: already accounted
  EXPECT_FALSE(again.recorded);
  clock.Advance(seconds(-20));  // another replica whose clock is behind
  EXPECT_FALSE(Account(1.0).recorded);
  clock.Advance(seconds(20));
  Run(minutes(1), std::nullopt);  // the exporter down for a minute
  const UsageItem item = MustReport("acme", minutes(2)).items.at(0);
  EXPECT_NEAR(item.allocated_gpu_hours, 2.0 / 60, 1e-12);
  EXPECT_NEAR(item.coverage, 0.5, 1e-12);
  EXPECT_NEAR(item.used_gpu_hours, 1.0 / 60, 1e-12) << "the missed minute is neither used nor idle";
  EXPECT_NEAR(item.waste_gpu_hours, 0, 1e-12);
}

TEST_F(UsageTest, TenantsSeeOnlyTheirOwnUsageAndPricesAndThePlatformAreAdmins) {
  Run(minutes(1), 0.5);
  const auto window = Window("acme", minutes(1));
  EXPECT_TRUE(service.TenantUsage(TenantCtx("acme", Role::kViewer), window).ok());
  EXPECT_TRUE(service.TenantUsage(Admin(Role::kViewer), window).ok());
  EXPECT_EQ(service.TenantUsage(TenantCtx("beta"), window).status().code(), Code::kNotFound);
  EXPECT_EQ(service.PlatformUsage(TenantCtx("acme"), Window("", minutes(1))).status().code(), Code::kPermissionDenied);
  ASSERT_TRUE(service.Hoarders(TenantCtx("acme"), "").ok()) << "a tenant asking for none gets its own";
  EXPECT_EQ(service.Hoarders(TenantCtx("acme"), "beta").status().code(), Code::kNotFound);
  EXPECT_EQ(service.Prices(TenantCtx("acme")).status().code(), Code::kPermissionDenied);
  const usage::GpuPrice price{.model = "A100-80GB", .tier = gpu::Tier::kDedicated, .per_gpu_hour = 2};
  EXPECT_EQ(service.CreatePrice(Admin(Role::kViewer), price).status().code(), Code::kPermissionDenied);
  ASSERT_TRUE(service.CreatePrice(Admin(), price).ok());
  const auto audit = Audit();
  EXPECT_TRUE(std::any_of(audit.begin(), audit.end(), [](const AuditRecord& r) {
    return r.action == "gpu_price.create" && r.resource == "gpu-prices/A100-80GB/dedicated";
  }));

  auto platform = service.PlatformUsage(Admin(), Window("", minutes(1), {"tenant"}));
  ASSERT_TRUE(platform.ok()) << platform.status().ToString();
  ASSERT_EQ(platform->usage.items.size(), 2u);
  ASSERT_EQ(platform->pool.size(), 1u);
  const double allocated = platform->usage.items[0].allocated_gpu_hours + platform->usage.items[1].allocated_gpu_hours;
  EXPECT_NEAR(allocated + platform->pool[0].unreserved_gpu_hours, platform->pool[0].capacity_gpu_hours, 1e-12);
  EXPECT_NEAR(platform->pool[0].unreserved_gpu_hours, 0, 1e-12) << "both GPUs are held";
}

TEST_F(UsageTest, EveryRefusedFieldIsNamed) {
  const auto refused = [&](UsageWindowRequest request, const std::string& field) {
    const Status st = service.TenantUsage(TenantCtx("acme"), request).status();
    EXPECT_EQ(st.code(), Code::kInvalidArgument) << field;
    EXPECT_NE(st.message().find(field), std::string::npos) << st.ToString();
  };
  UsageWindowRequest ok = Window("acme", minutes(60));
  auto with = [&](auto change) {
    UsageWindowRequest r = ok;
    change(r);
    return r;
  };
  refused(with([](auto& r) { r.start = "yesterday"; }), "start");
  refused(with([](auto& r) { r.start = ""; }), "start");
  refused(with([&](auto& r) { r.end = r.start; }), "end");
  refused(with([](auto& r) { r.step = "1s"; }), "step");
  refused(with([](auto& r) { r.step = "0m"; }), "step");
  refused(with([](auto& r) {
            r.step = "1m";
            r.end = FormatRfc3339(ParseRfc3339(r.start).value() + std::chrono::hours(24 * 3));
          }),
          "step");  // 4,320 buckets
  refused(with([](auto& r) { r.group_by = {"pod"}; }), "group_by");
  refused(with([](auto& r) { r.group_by = {"tenant"}; }), "group_by");  // a tenant's report is one tenant
  refused(with([](auto& r) { r.group_by = {"model", "model"}; }), "group_by");
  refused(with([](auto& r) { r.start = "2026-11-01T00:00:30Z"; }), "start");
  refused(with([](auto& r) { r.end = FormatRfc3339(ParseRfc3339(r.start).value() + std::chrono::hours(24 * 401)); }),
          "end");
  clock.Advance(std::chrono::hours(24 * 40));
  refused(with([](auto& r) { r.start = FormatRfc3339(ParseRfc3339(r.start).value() + minutes(1)); }), "start");

  const auto bad_price = [&](usage::GpuPrice price, const std::string& field) {
    const Status st = service.CreatePrice(Admin(), price).status();
    EXPECT_EQ(st.code(), Code::kInvalidArgument) << field;
    EXPECT_NE(st.message().find(field), std::string::npos) << st.ToString();
  };
  bad_price({.model = "B300", .per_gpu_hour = 1}, "price.model");
  bad_price({.model = "A100-80GB", .mig_profile = "3g.40gb", .per_gpu_hour = 1}, "price.mig_profile");
  bad_price({.model = "A100-80GB", .tier = gpu::Tier::kIsolated, .mig_profile = "9g.1tb", .per_gpu_hour = 1},
            "price.mig_profile");
  bad_price({.model = "A100-80GB", .per_gpu_hour = -1}, "price.per_gpu_hour");
  bad_price({.model = "A100-80GB", .per_gpu_hour = 1, .valid_from = clock.Now() - std::chrono::hours(1)},
            "price.valid_from");
}

TEST_F(UsageTest, AHoarderIsFlaggedAtItsThresholdAndNeverFromANodeNobodyScrapes) {
  Run(minutes(2), 0.5);
  auto hoarders = service.Hoarders(Admin(), "");
  ASSERT_TRUE(hoarders.ok());
  EXPECT_TRUE(hoarders->empty()) << "beta has idled under the 120 s threshold";
  Run(minutes(1), 0.5);
  hoarders = service.Hoarders(Admin(), "");
  ASSERT_TRUE(hoarders.ok());
  ASSERT_EQ(hoarders->size(), 1u);
  EXPECT_EQ((*hoarders)[0].tenant, "beta");
  EXPECT_TRUE((*hoarders)[0].holding_memory);
  EXPECT_GE((*hoarders)[0].idle, seconds(120));
  EXPECT_EQ((*hoarders)[0].threshold, seconds(120));
  EXPECT_EQ(service.Hoarders(TenantCtx("beta", Role::kViewer), "beta")->size(), 1u);
  EXPECT_EQ(service.Hoarders(TenantCtx("beta", Role::kViewer), "")->size(), 1u) << "its own";
  EXPECT_TRUE(service.Hoarders(TenantCtx("acme", Role::kViewer), "")->empty()) << "beta's is not acme's";

  clock.Advance(minutes(5));  // nobody scrapes the node any more: unknown, not idle
  EXPECT_TRUE(service.Hoarders(Admin(), "")->empty());
}

TEST_F(UsageTest, AReservationTheInventoryCannotKeyIsCountedAndBilledToNobody) {
  ASSERT_TRUE(store
                  .Transact(TxMode::kReadWrite,
                            [&](Tx& tx) -> Status {
                              auto node = tx.Inventory().GetNode(kUsageNode);
                              SEPTA_RETURN_IF_ERROR(node);
                              node->gpus[1].uuid.clear();  // a real cluster without a UUID observed
                              return tx.Inventory().PutNode(*node, clock.Now());
                            })
                  .ok());
  clock.Advance(seconds(30));
  const NodeAccountingResult result = Account(0.5);
  EXPECT_TRUE(result.recorded);
  EXPECT_EQ(result.unmeasurable_reservations, 1);
  EXPECT_NE(result.unmeasurable.find("beta"), std::string::npos) << result.unmeasurable;
  EXPECT_EQ(MustReport("beta", minutes(1)).items.size(), 0u);
  EXPECT_EQ(MustReport("acme", minutes(1)).items.size(), 1u);
}

}  // namespace
}  // namespace septa::core
