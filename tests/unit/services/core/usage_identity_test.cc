// A real cluster's inventory has no GPU UUIDs (nothing on the Node says
// them): the accounting learns them from the exporter's own series
// (tenancy/usage/gpu_identity.h), keeps them across a failed scrape, and so
// bills and measures what Septa reserved by index.
#include <gtest/gtest.h>

#include "tests/unit/services/core/usage_fixture.h"

namespace septa::core {
namespace {

using std::chrono::minutes;
using std::chrono::seconds;

class UsageIdentityTest : public UsageTest {
 protected:
  void SetUp() override {
    UsageTest::SetUp();
    ASSERT_TRUE(store
                    .Transact(TxMode::kReadWrite,
                              [&](Tx& tx) -> Status {
                                SEPTA_ASSIGN_OR_RETURN(gpu::InventoryNode node, tx.Inventory().GetNode(kUsageNode));
                                for (gpu::InventoryGpu& g : node.gpus) g.uuid.clear();
                                return tx.Inventory().PutNode(node, clock.Now());
                              })
                    .ok());
  }

  // As a real exporter labels them: `gpu` (the index) and `UUID`.
  usage::NodeScrape IndexedScrape(double acme_gr) const {
    usage::NodeScrape scrape = Scrape(acme_gr);
    for (usage::DcgmSample& sample : scrape.samples) sample.gpu.index = sample.gpu.uuid == Uuid(0) ? 0 : 1;
    return scrape;
  }

  NodeAccountingResult AccountNow(std::optional<usage::NodeScrape> scrape) {
    clock.Advance(seconds(30));
    if (scrape) scrape->at = clock.Now();
    auto result = accounting.Account(kUsageNode, clock.Now(), scrape);
    EXPECT_TRUE(result.ok()) << result.status().ToString();
    return result.ok() ? *result : NodeAccountingResult{};
  }
};

TEST_F(UsageIdentityTest, UuidsTheInventoryLacksAreLearntFromTheExporterAndKeptAcrossAFailedScrape) {
  NodeAccountingResult first = AccountNow(IndexedScrape(0.5));
  EXPECT_EQ(first.unmeasurable_reservations, 0) << first.unmeasurable;
  EXPECT_EQ(first.learnt.uuids, 2);
  for (int i = 0; i < 3; ++i) AccountNow(IndexedScrape(0.5));
  const NodeAccountingResult failed = AccountNow(std::nullopt);
  EXPECT_EQ(failed.unmeasurable_reservations, 0) << "a failed scrape still knows the UUIDs: " << failed.unmeasurable;
  EXPECT_TRUE(failed.recorded);

  const UsageReport acme = MustReport("acme", minutes(5));
  ASSERT_EQ(acme.items.size(), 1u);
  EXPECT_NEAR(acme.items[0].allocated_gpu_hours, 150.0 / 3600, 1e-9) << "every 30 s since the first scrape, billed";
  EXPECT_NEAR(acme.items[0].used_gpu_hours, 0.5 * acme.items[0].measured_gpu_hours, 1e-9);
  EXPECT_LT(acme.items[0].coverage, 1) << "the failed scrape's 30 s were not measured";
}

TEST_F(UsageIdentityTest, WithoutTheExportersIndexNothingIsGuessedAndTheReservationsAreCounted) {
  const NodeAccountingResult result = AccountNow(Scrape(0.5));  // no `gpu` label: index unknown
  EXPECT_EQ(result.learnt.uuids, 0);
  EXPECT_EQ(result.unmeasurable_reservations, 2);
  EXPECT_NE(result.unmeasurable.find("UUID"), std::string::npos) << result.unmeasurable;
}

}  // namespace
}  // namespace septa::core
