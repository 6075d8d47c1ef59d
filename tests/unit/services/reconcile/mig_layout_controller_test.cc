// The MIG layout controller against kubesim's MIG manager, on the fake store
// and on PostgreSQL, with the inventory controller writing what the node reports: a virtual
// cluster asking for a profile no current layout has is reserved on a layout
// target; the controller asks the node for it through the GPU operator's
// ConfigMap and label; success settles the virtual cluster, failure (pods use
// the node's MIG devices, so kubesim's MIG manager refuses) rolls it back.
#include "services/reconcile/mig_layout_controller.h"

#include <gtest/gtest.h>

#include <prometheus/registry.h>

#include <thread>

#include "gpu/mig_parted.h"
#include "services/core/virtual_cluster_service.h"
#include "services/kube/client.h"
#include "services/kube/resources.h"
#include "services/kubesim/kubesim.h"
#include "services/reconcile/inventory_controller.h"
#include "services/store/migration.h"
#include "services/store/pg_store.h"
#include "tests/support/fake_clock.h"
#include "tests/support/fake_store.h"
#include "tests/support/test_database.h"

namespace septa::reconcile {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;
using kube::kConfigMaps;
using kube::kNodes;
using kube::kPods;

// Two H100s laid out as seven 1g.10gb each: no 3g.40gb anywhere.
constexpr const char* kInventory = R"(
nodes:
  - name: h100-0
    cpu: "96"
    memory: 1Ti
    gpus: {model: H100-80GB, count: 2, migConfig: all-1g.10gb}
)";

enum class StoreKind { kFake, kPostgres };

class reconcileMigLayout : public ::testing::TestWithParam<StoreKind> {
 protected:
  void SetUp() override {
    if (GetParam() == StoreKind::kFake) {
      store_ = std::make_unique<core::FakeStore>();
    } else {
      auto database = test::TestDatabase::CreateMigrated();
      ASSERT_TRUE(database.ok()) << database.status().ToString();
      database_ = *std::move(database);
      auto migrations = store::EmbeddedMigrations();
      ASSERT_TRUE(migrations.ok());
      store_ = std::make_unique<store::PgStore>(
          store::PgStoreOptions{.database_url = database_->url(), .pool_size = 4, .migrations = *migrations});
    }
    vclusters_ = std::make_unique<core::VirtualClusterService>(*store_, clock_, ledger_, gpu::Catalog::Default());
    kubesim::KubeSimOptions options;
    options.clock = &clock_;
    options.tick_interval = 5ms;
    options.nodes.mig_reconfigure_delay = 2s;
    options.inventory = *kubesim::ParseInventory(kInventory, "test");
    sim_ = std::make_unique<kubesim::KubeSim>(options);
    ASSERT_TRUE(sim_->Start().ok());
    client_ = std::move(*kube::Client::Create(*kube::ParseKubeconfig(*sim_->AdminKubeconfig())));
    inventory_ = std::make_unique<InventoryController>(InventoryControllerOptions{}, *store_, *client_,
                                                       gpu::Catalog::Default(), mig_configs_, clock_, registry_);
    ASSERT_TRUE(inventory_->Start(10s).ok());
    ASSERT_TRUE(inventory_->AwaitIdle(10s));
    controller_ = std::make_unique<MigLayoutController>(MigLayoutControllerOptions{.poll = 1s}, *store_, *client_,
                                                        gpu::Catalog::Default(), clock_, registry_);
    ASSERT_TRUE(store_
                    ->Transact(core::TxMode::kReadWrite,
                               [](core::Tx& tx) {
                                 core::Tenant t;
                                 t.name = "acme";
                                 t.trust_tier = "isolated";
                                 t.version = 1;
                                 return tx.Tenants().Insert(t);
                               })
                    .ok());
  }

  Result<core::VirtualClusterView> CreateVirtualCluster(const std::string& name, const std::string& profile) {
    core::RequestContext ctx;
    ctx.principal.tenant = "acme";
    ctx.principal.role = core::Role::kOwner;
    tenancy::VirtualCluster vc;
    vc.name = name;
    vc.capacity.tier = gpu::Tier::kIsolated;
    vc.capacity.mig = {{profile, 1, ""}};
    return vclusters_->Create(ctx, "acme", vc, "");
  }

  template <typename T>
  T Read(const std::function<Result<T>(core::Tx&)>& read) {
    T out{};
    EXPECT_TRUE(store_
                    ->Transact(core::TxMode::kReadOnly,
                               [&](core::Tx& tx) -> Status {
                                 auto got = read(tx);
                                 SEPTA_RETURN_IF_ERROR(got);
                                 out = *std::move(got);
                                 return Status::Ok();
                               })
                    .ok());
    return out;
  }
  std::vector<tenancy::MigLayoutTarget> Targets() {
    return Read<std::vector<tenancy::MigLayoutTarget>>([](core::Tx& tx) { return tx.Inventory().ListLayoutTargets(); });
  }
  tenancy::VirtualCluster Stored(const std::string& name) {
    return Read<tenancy::VirtualCluster>([&](core::Tx& tx) { return tx.VirtualClusters().Get("acme", name); });
  }

  std::string NodeLabel(const std::string& key) {
    auto node = client_->Get(kNodes, "", "h100-0");
    return node.ok() ? (*node)["metadata"]["labels"].value(key, "") : "";
  }

  // Bounded: each round lets kubesim's MIG manager and the controllers' polls
  // move on by the fake clock, then waits for the controllers to settle.
  bool RunUntil(const std::function<bool()>& done) {
    for (int i = 0; i < 200; ++i) {
      EXPECT_TRUE(inventory_->AwaitIdle(10s));
      EXPECT_TRUE(controller_->AwaitIdle(10s));
      if (done()) return true;
      clock_.Advance(500ms);
      std::this_thread::sleep_for(10ms);  // kubesim's tick runs on its own thread
    }
    return false;
  }

  FakeClock clock_;
  std::unique_ptr<test::TestDatabase> database_;
  std::unique_ptr<core::Store> store_;
  prometheus::Registry registry_;
  gpu::MigPartedConfig mig_configs_ = gpu::StockMigPartedConfigs(gpu::Catalog::Default());
  core::CapacityLedger ledger_{gpu::Catalog::Default()};
  std::unique_ptr<core::VirtualClusterService> vclusters_;
  std::unique_ptr<kubesim::KubeSim> sim_;
  std::unique_ptr<kube::Client> client_;
  std::unique_ptr<InventoryController> inventory_;
  std::unique_ptr<MigLayoutController> controller_;
};

TEST_P(reconcileMigLayout, AppliesTheTargetsThroughTheGpuOperatorAndSettlesTheVirtualCluster) {
  auto created = CreateVirtualCluster("train", "3g.40gb");
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  const tenancy::ReservedMig held = created->reservation->mig.at(0);
  const auto targets = Targets();
  ASSERT_EQ(targets.size(), 1u);
  const std::string config = targets[0].mig_config;
  EXPECT_EQ(tenancy::FindCondition(created->vcluster.conditions, "CapacityReady")->reason, "MigRelayout");

  ASSERT_TRUE(controller_->Start(10s).ok());
  ASSERT_TRUE(RunUntil([&] { return NodeLabel("nvidia.com/mig.config") == config; }));
  // The node's config in the GPU operator's ConfigMap: the target, and the other GPU as it was.
  auto configmap = client_->Get(kConfigMaps, "gpu-operator", "septa-mig-parted-config");
  ASSERT_TRUE(configmap.ok()) << configmap.status().ToString();
  auto parsed = gpu::ParseMigParted((*configmap)["data"].value("config.yaml", ""), "configmap");
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  const gpu::GpuModel& h100 = *gpu::Catalog::Default().Find("H100-80GB");
  auto target_setup = gpu::MigSetupFor(*parsed, config, h100, held.gpu);
  ASSERT_TRUE(target_setup.ok());
  EXPECT_EQ(gpu::LayoutToString(h100, gpu::CreationOrder(h100, target_setup->layout)),
            gpu::LayoutToString(h100, targets[0].layout));
  auto kept_setup = gpu::MigSetupFor(*parsed, config, h100, 1 - held.gpu);
  ASSERT_TRUE(kept_setup.ok());
  EXPECT_EQ(kept_setup->layout.size(), 7u);

  ASSERT_TRUE(RunUntil([&] { return Targets().empty(); })) << "never settled";
  EXPECT_EQ(NodeLabel("nvidia.com/mig.config.state"), "success");
  const tenancy::VirtualCluster vc = Stored("train");
  const tenancy::Condition* ready = tenancy::FindCondition(vc.conditions, "CapacityReady");
  ASSERT_NE(ready, nullptr);
  EXPECT_EQ(ready->status, tenancy::ConditionStatus::kTrue);
  EXPECT_EQ(vc.state, tenancy::VirtualClusterState::kProvisioning);
  EXPECT_EQ(vc.version, 2);
  // The inventory has the new layout and the reservation is on it.
  auto node = Read<gpu::InventoryNode>([](core::Tx& tx) { return tx.Inventory().GetNode("h100-0"); });
  EXPECT_TRUE(tenancy::LayoutTargetsReached(node, targets));
  auto reservation = Read<tenancy::Reservation>([](core::Tx& tx) { return tx.Reservations().Get("acme", "train"); });
  ASSERT_EQ(reservation.mig.size(), 1u);
  EXPECT_EQ(reservation.mig[0].profile, "3g.40gb");
  // A rebuilt engine holds it on the observed layout: the target's other
  // 3g.40gb instances, if any, are all that is left.
  const auto three_g =
      std::count_if(targets[0].layout.begin(), targets[0].layout.end(),
                    [&](const gpu::MigInstance& i) { return i.profile == h100.ProfileIndex("3g.40gb"); });
  core::CapacityLedger fresh{gpu::Catalog::Default(), "septa", core::MigRelayoutPolicy::kOff};
  core::VirtualClusterService replica{*store_, clock_, fresh, gpu::Catalog::Default()};
  core::RequestContext ctx;
  ctx.principal.tenant = "acme";
  ctx.principal.role = core::Role::kOwner;
  tenancy::VirtualCluster more;
  more.name = "more";
  more.capacity.tier = gpu::Tier::kIsolated;
  more.capacity.mig = {{"3g.40gb", 2, ""}};
  auto refused = replica.Create(ctx, "acme", more, "");
  ASSERT_EQ(refused.status().code(), Code::kResourceExhausted) << refused.status().ToString();
  EXPECT_TRUE(refused.status().violations().at(0).description.starts_with("2 × 3g.40gb requested, " +
                                                                          std::to_string(three_g - 1) + " free"))
      << refused.status().ToString();
}

TEST_P(reconcileMigLayout, AFailedReLayoutReleasesTheReservationAndFailsTheVirtualCluster) {
  // A pod uses one of the node's MIG devices: kubesim's MIG manager refuses to reconfigure.
  json pod = {
      {"apiVersion", "v1"},
      {"kind", "Pod"},
      {"metadata", {{"name", "busy"}, {"namespace", "default"}}},
      {"spec",
       {{"nodeName", "h100-0"},
        {"containers",
         {{{"name", "c"}, {"image", "cuda"}, {"resources", {{"requests", {{"nvidia.com/mig-1g.10gb", "1"}}}}}}}}}}};
  ASSERT_TRUE(client_->Create(kPods, "default", pod).ok());
  auto created = CreateVirtualCluster("train", "3g.40gb");
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  ASSERT_EQ(Targets().size(), 1u);
  const std::string config = Targets()[0].mig_config;

  ASSERT_TRUE(controller_->Start(10s).ok());
  ASSERT_TRUE(RunUntil([&] { return Targets().empty(); })) << "never rolled back";
  EXPECT_EQ(NodeLabel("nvidia.com/mig.config"), config);
  EXPECT_EQ(NodeLabel("nvidia.com/mig.config.state"), "failed");
  const tenancy::VirtualCluster vc = Stored("train");
  EXPECT_EQ(vc.state, tenancy::VirtualClusterState::kFailed);
  const tenancy::Condition* ready = tenancy::FindCondition(vc.conditions, "CapacityReady");
  ASSERT_NE(ready, nullptr);
  EXPECT_EQ(ready->status, tenancy::ConditionStatus::kFalse);
  EXPECT_EQ(ready->reason, "MigRelayoutFailed");
  EXPECT_NE(ready->message.find(config), std::string::npos) << ready->message;
  // The release is audited as every release of a reservation is.
  const auto audit = Read<std::vector<core::AuditRecord>>(
      [](core::Tx& tx) { return tx.Audit().List("tenants/acme/vclusters/train", 10); });
  const auto release =
      std::ranges::find_if(audit, [](const core::AuditRecord& r) { return r.action == "vcluster.relayout_release"; });
  ASSERT_NE(release, audit.end());
  EXPECT_EQ(release->principal, "system:mig-layout");
  EXPECT_EQ(release->new_etag, core::EtagOf(vc.version));
  EXPECT_EQ(store_
                ->Transact(core::TxMode::kReadOnly,
                           [](core::Tx& tx) { return tx.Reservations().Get("acme", "train").status(); })
                .code(),
            Code::kNotFound);
  // The GPUs keep their 1g.10gb layouts.
  auto node = Read<gpu::InventoryNode>([](core::Tx& tx) { return tx.Inventory().GetNode("h100-0"); });
  for (const auto& g : node.gpus) EXPECT_EQ(g.mig_layout.size(), 7u);
}

INSTANTIATE_TEST_SUITE_P(Stores, reconcileMigLayout, ::testing::Values(StoreKind::kFake, StoreKind::kPostgres),
                         [](const auto& info) { return info.param == StoreKind::kFake ? "Fake" : "Postgres"; });

}  // namespace
}  // namespace septa::reconcile
