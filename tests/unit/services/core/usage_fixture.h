// The usage tests' fixture on the FakeStore: tenants acme and beta of tier
// dedicated, each holding one GPU of node a100-0 through its READY virtual
// cluster "train"; scrapes every 30 s of the injected clock, acme's GPU at
// a chosen activity, beta's idle holding memory.
#pragma once

#include <gtest/gtest.h>

#include "services/core/usage_accounting.h"
#include "services/core/usage_service.h"
#include "tests/unit/services/core/core_fixture.h"

namespace septa::core {

namespace usage = tenancy::usage;

inline constexpr char kUsageNode[] = "a100-0";

class UsageTest : public CoreTest {
 protected:
  using minutes = std::chrono::minutes;
  using seconds = std::chrono::seconds;

  UsageTest() {
    // A whole minute, so that reports by the minute can read it.
    clock.Set(TimePoint(std::chrono::floor<minutes>(clock.Now().time_since_epoch())));
    start_ = clock.Now();
  }

  void SetUp() override {
    MustCreate("acme", "dedicated");
    MustCreate("beta", "dedicated");
    gpu::InventoryNode node;
    node.name = kUsageNode;
    node.cpu_milli = 64000;
    node.memory_mib = 512000;
    for (int i = 0; i < 2; ++i) {
      gpu::InventoryGpu g;
      g.model = "A100-80GB";
      g.index = i;
      g.uuid = Uuid(i);
      node.gpus.push_back(g);
    }
    ASSERT_TRUE(store
                    .Transact(TxMode::kReadWrite,
                              [&](Tx& tx) -> Status {
                                SEPTA_RETURN_IF_ERROR(tx.Inventory().PutNode(node, clock.Now()));
                                for (const auto& [tenant, gpu] : {std::pair{"acme", 0}, std::pair{"beta", 1}}) {
                                  tenancy::VirtualCluster vc;
                                  vc.tenant = tenant;
                                  vc.name = "train";
                                  vc.capacity.tier = gpu::Tier::kDedicated;
                                  vc.state = tenancy::VirtualClusterState::kReady;
                                  vc.host_namespace = std::string(tenant) + "-x-train";
                                  SEPTA_RETURN_IF_ERROR(tx.VirtualClusters().Insert(vc));
                                  tenancy::Reservation held;
                                  held.tenant = tenant;
                                  held.vcluster = "train";
                                  held.tier = gpu::Tier::kDedicated;
                                  held.gpus = {{.node = kUsageNode, .gpu = gpu}};
                                  SEPTA_RETURN_IF_ERROR(tx.Reservations().Insert(held));
                                }
                                return Status::Ok();
                              })
                    .ok());
  }

  static std::string Uuid(int gpu) { return "GPU-a100-0-" + std::to_string(gpu); }

  // A scrape now: acme's GPU at `acme_gr`, beta's at 0 holding memory.
  usage::NodeScrape Scrape(double acme_gr) const {
    const auto sample = [](const std::string& uuid, usage::DcgmSignal signal, double value) {
      return usage::DcgmSample{.signal = signal, .gpu = {.node = kUsageNode, .uuid = uuid}, .value = value};
    };
    return {.node = kUsageNode,
            .at = clock.Now(),
            .samples = {sample(Uuid(0), usage::DcgmSignal::kGrEngineActive, acme_gr),
                        sample(Uuid(1), usage::DcgmSignal::kGrEngineActive, 0),
                        sample(Uuid(1), usage::DcgmSignal::kFbUsed, 20000)}};
  }

  NodeAccountingResult Account(std::optional<double> acme_gr) {
    std::optional<usage::NodeScrape> scrape;
    if (acme_gr) scrape = Scrape(*acme_gr);
    auto result = accounting.Account(kUsageNode, clock.Now(), scrape);
    EXPECT_TRUE(result.ok()) << result.status().ToString();
    return result.ok() ? *result : NodeAccountingResult{};
  }

  // Every 30 s for `duration`, acme at `acme_gr` (nullopt: the scrape failed).
  void Run(seconds duration, std::optional<double> acme_gr) {
    for (seconds t{0}; t < duration; t += seconds(30)) {
      clock.Advance(seconds(30));
      Account(acme_gr);
    }
  }

  UsageWindowRequest Window(const std::string& tenant, minutes length, std::vector<std::string> group_by = {}) {
    return {.tenant = tenant,
            .start = FormatRfc3339(start_),
            .end = FormatRfc3339(start_ + length),
            .group_by = std::move(group_by)};
  }

  UsageReport MustReport(const std::string& tenant, minutes length) {
    auto report = service.TenantUsage(TenantCtx(tenant, Role::kViewer), Window(tenant, length));
    EXPECT_TRUE(report.ok()) << report.status().ToString();
    return report.ok() ? *report : UsageReport{};
  }

  UsageAccounting accounting{store, gpu::Catalog::Default(), {}};
  UsageService service{
      store, clock, {.hoarding = {.thresholds = {.dedicated = seconds(120)}, .idle_stale_after = seconds(120)}}};
  TimePoint start_;
};

}  // namespace septa::core
