// The inventory controller against kubesim, on the fake store: nodes added,
// relabelled (a MIG re-layout through kubesim's MIG manager), their MIG
// instances renumbered, NotReady and removed, with and without a reservation
// on them.
#include "services/reconcile/inventory_controller.h"

#include <gtest/gtest.h>

#include <prometheus/registry.h>

#include <algorithm>
#include <thread>

#include "services/kube/client.h"
#include "services/kube/gpu_labels.h"
#include "services/kube/resources.h"
#include "services/kubesim/kubesim.h"
#include "tests/support/fake_clock.h"
#include "tests/support/fake_store.h"

namespace septa::reconcile {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;
using kube::kNodes;

constexpr const char* kInventory = R"(
nodes:
  - name: h100-0
    cpu: "96"
    memory: 1Ti
    gpus: {model: H100-80GB, count: 8, migConfig: all-balanced}
  - name: a100-0
    cpu: "64"
    memory: 512Gi
    gpus: {model: A100-80GB, count: 8}
  - name: t4-0
    cpu: "32"
    memory: 128Gi
    gpus: {model: T4, count: 4}
)";

// A node that joins later, as GPU feature discovery and the device plugin describe it.
json JoiningNode(const std::string& name) {
  json allocatable = {{"cpu", "48"}, {"memory", "256Gi"}, {"pods", "110"}, {"nvidia.com/gpu", "2"}};
  return {{"apiVersion", "v1"},
          {"kind", "Node"},
          {"metadata",
           {{"name", name},
            {"labels",
             {{"kubernetes.io/hostname", name},
              {"nvidia.com/gpu.product", "NVIDIA-A100-SXM4-80GB"},
              {"nvidia.com/gpu.count", "2"},
              {"nvidia.com/mig.capable", "true"}}}}},
          {"spec", json::object()},
          {"status",
           {{"capacity", allocatable},
            {"allocatable", allocatable},
            {"conditions", {{{"type", "Ready"}, {"status", "True"}}}}}}};
}

class reconcileInventory : public ::testing::Test {
 protected:
  void SetUp() override {
    kubesim::KubeSimOptions options;
    options.clock = &clock_;
    options.tick_interval = 5ms;
    options.nodes.mig_reconfigure_delay = 2s;
    options.inventory = *kubesim::ParseInventory(kInventory, "test");
    sim_ = std::make_unique<kubesim::KubeSim>(options);
    ASSERT_TRUE(sim_->Start().ok());
    client_ = std::move(*kube::Client::Create(*kube::ParseKubeconfig(*sim_->AdminKubeconfig())));
    controller_ = std::make_unique<InventoryController>(InventoryControllerOptions{}, store_, *client_,
                                                        gpu::Catalog::Default(), mig_configs_, clock_, registry_);
  }

  std::optional<gpu::InventoryNode> Stored(const std::string& name) {
    std::optional<gpu::InventoryNode> node;
    EXPECT_TRUE(store_
                    .Transact(core::TxMode::kReadOnly,
                              [&](core::Tx& tx) -> Status {
                                auto got = tx.Inventory().GetNode(name);
                                if (got.ok()) node = *got;
                                return got.ok() || got.status().code() == Code::kNotFound ? Status::Ok() : got.status();
                              })
                    .ok());
    return node;
  }

  // Bounded: the informer's event reaches the controller, which writes the store.
  std::optional<gpu::InventoryNode> WaitStored(
      const std::string& name, const std::function<bool(const std::optional<gpu::InventoryNode>&)>& ok) {
    std::optional<gpu::InventoryNode> node;
    for (int i = 0; i < 1000; ++i) {
      EXPECT_TRUE(controller_->AwaitIdle(10s));
      node = Stored(name);
      if (ok(node)) return node;
      std::this_thread::sleep_for(5ms);
    }
    ADD_FAILURE() << "the store never showed the expected state of node " << name;
    return node;
  }

  void WaitNodeLabel(const std::string& name, const std::string& key, const std::string& want) {
    for (int i = 0; i < 1000; ++i) {
      auto node = client_->Get(kNodes, "", name);
      if (node.ok() && (*node)["metadata"]["labels"].value(key, "") == want) return;
      std::this_thread::sleep_for(5ms);
    }
    ADD_FAILURE() << name << " never had " << key << "=" << want;
  }

  void SetMigConfig(const std::string& node, const std::string& config) {
    ASSERT_TRUE(client_
                    ->Patch(kNodes, "", node, kube::PatchType::kMerge,
                            json{{"metadata", {{"labels", {{"nvidia.com/mig.config", config}}}}}}.dump())
                    .ok());
  }

  void Reserve(const std::string& node, int gpu) {
    ASSERT_TRUE(store_
                    .Transact(core::TxMode::kReadWrite,
                              [&](core::Tx& tx) -> Status {
                                core::Tenant t;
                                t.name = "ann";
                                t.display_name = "Ann";
                                t.trust_tier = "dedicated";
                                t.version = 1;
                                SEPTA_RETURN_IF_ERROR(tx.Tenants().Insert(t));
                                tenancy::VirtualCluster vc;
                                vc.tenant = "ann";
                                vc.name = "train";
                                vc.capacity.tier = gpu::Tier::kDedicated;
                                SEPTA_RETURN_IF_ERROR(tx.VirtualClusters().Insert(vc));
                                tenancy::Reservation r;
                                r.tenant = "ann";
                                r.vcluster = "train";
                                r.tier = gpu::Tier::kDedicated;
                                r.gpus = {{node, gpu}};
                                return tx.Reservations().Insert(r);
                              })
                    .ok());
  }

  FakeClock clock_;
  core::FakeStore store_;
  prometheus::Registry registry_;
  gpu::MigPartedConfig mig_configs_ = gpu::StockMigPartedConfigs(gpu::Catalog::Default());
  std::unique_ptr<kubesim::KubeSim> sim_;
  std::unique_ptr<kube::Client> client_;
  std::unique_ptr<InventoryController> controller_;
};

TEST_F(reconcileInventory, StoresEveryNodeAtStartAndForgetsNodesThatLeftWhileItWasDown) {
  // A node stored by an earlier run, gone from the host since.
  gpu::InventoryNode stale;
  stale.name = "old-0";
  ASSERT_TRUE(
      store_.Transact(core::TxMode::kReadWrite, [&](core::Tx& tx) { return tx.Inventory().PutNode(stale, {}); }).ok());

  ASSERT_TRUE(controller_->Start(10s).ok());
  ASSERT_TRUE(controller_->AwaitIdle(10s));
  auto h100 = Stored("h100-0");
  ASSERT_TRUE(h100);
  EXPECT_EQ(h100->health, gpu::NodeHealth::kReady);
  EXPECT_EQ(h100->cpu_milli, 96000);
  ASSERT_EQ(h100->gpus.size(), 8u);
  EXPECT_EQ(h100->gpus[3].model, "H100-80GB");
  EXPECT_TRUE(h100->gpus[3].mig_enabled);
  EXPECT_EQ(h100->gpus[3].mig_layout.size(), 4u) << "all-balanced: 3g + 2g + 2 x 1g";
  auto a100 = Stored("a100-0");
  ASSERT_TRUE(a100);
  ASSERT_EQ(a100->gpus.size(), 8u);
  EXPECT_FALSE(a100->gpus[0].mig_enabled);
  EXPECT_TRUE(Stored("t4-0"));
  EXPECT_FALSE(Stored("old-0")) << "listed from the store at start and found gone";
}

TEST_F(reconcileInventory, FollowsNodesAddedRelabelledAndRemoved) {
  ASSERT_TRUE(controller_->Start(10s).ok());
  ASSERT_TRUE(client_->Create(kNodes, "", JoiningNode("late-0")).ok());
  auto late = WaitStored("late-0", [](const auto& n) { return n.has_value(); });
  ASSERT_TRUE(late);
  ASSERT_EQ(late->gpus.size(), 2u);
  EXPECT_EQ(late->gpus[1].model, "A100-80GB");

  // A re-layout: while pending, the GPUs keep the layout stored last.
  SetMigConfig("a100-0", "all-balanced");
  WaitNodeLabel("a100-0", "nvidia.com/mig.config.state", "pending");
  auto pending = WaitStored("a100-0", [](const auto& n) { return n && n->mig_config_state == "pending"; });
  ASSERT_TRUE(pending);
  EXPECT_EQ(pending->mig_config, "all-balanced");
  EXPECT_FALSE(pending->gpus[0].mig_enabled) << "not settled: the stored layout stays";
  clock_.Advance(2500ms);
  auto applied = WaitStored("a100-0", [](const auto& n) { return n && n->mig_config_state == "success"; });
  ASSERT_TRUE(applied);
  EXPECT_TRUE(applied->gpus[0].mig_enabled);
  EXPECT_EQ(applied->gpus[0].mig_layout.size(), 4u);
  for (std::size_t i = 1; i < applied->gpus[0].mig_layout.size(); ++i) {
    EXPECT_LT(applied->gpus[0].mig_layout[i - 1].start, applied->gpus[0].mig_layout[i].start) << "by start slice";
  }

  ASSERT_TRUE(client_->Delete(kNodes, "", "t4-0").ok());
  WaitStored("t4-0", [](const auto& n) { return !n.has_value(); });
}

TEST_F(reconcileInventory, StoresTheGpuInstanceIdsTheNodeTellsAndTheirChanges) {
  ASSERT_TRUE(controller_->Start(10s).ok());
  ASSERT_TRUE(controller_->AwaitIdle(10s));
  auto h100 = Stored("h100-0");
  ASSERT_TRUE(h100);
  const gpu::InventoryGpu& stored = h100->gpus[3];
  ASSERT_EQ(stored.mig_gi_ids.size(), stored.mig_layout.size()) << "kubesim's annotation tells every instance's id";
  EXPECT_TRUE(Stored("a100-0")->gpus[0].mig_gi_ids.empty());

  // The driver renumbers an instance (as after its re-creation): a change to store.
  auto object = client_->Get(kNodes, "", "h100-0");
  ASSERT_TRUE(object.ok());
  json gpus = json::parse((*object)["metadata"]["annotations"][kube::kGpuIdentityAnnotation].get<std::string>());
  json& device = gpus[3]["migDevices"][0];
  const int start = device["start"].get<int>();
  int renumbered = 0;  // above every id stored (clang 14 cannot take a view of a std::map's values)
  for (const auto& id : stored.mig_gi_ids) renumbered = std::max(renumbered, id.second + 1);
  device["giId"] = renumbered;
  ASSERT_TRUE(client_
                  ->Patch(kNodes, "", "h100-0", kube::PatchType::kMerge,
                          json{{"metadata", {{"annotations", {{kube::kGpuIdentityAnnotation, gpus.dump()}}}}}}.dump())
                  .ok());
  WaitStored("h100-0", [&](const auto& n) { return n && n->gpus[3].mig_gi_ids.at(start) == renumbered; });
}

TEST_F(reconcileInventory, KeepsANodeWithAReservationAsNotReadyThenGone) {
  ASSERT_TRUE(controller_->Start(10s).ok());
  ASSERT_TRUE(controller_->AwaitIdle(10s));
  Reserve("a100-0", 2);

  kube::PatchOptions status;
  status.subresource = "status";
  ASSERT_TRUE(client_
                  ->Patch(kNodes, "", "a100-0", kube::PatchType::kMerge,
                          R"({"status":{"conditions":[{"type":"Ready","status":"False","reason":"KubeletDown"}]}})",
                          status)
                  .ok());
  auto not_ready = WaitStored("a100-0", [](const auto& n) { return n && n->health == gpu::NodeHealth::kNotReady; });
  ASSERT_TRUE(not_ready);
  EXPECT_EQ(not_ready->gpus.size(), 8u);

  ASSERT_TRUE(client_->Delete(kNodes, "", "a100-0").ok());
  auto gone = WaitStored("a100-0", [](const auto& n) { return n && n->health == gpu::NodeHealth::kGone; });
  ASSERT_TRUE(gone) << "kept while reserved";
  EXPECT_EQ(gone->gpus.size(), 8u);

  // Released: the next look removes it.
  ASSERT_TRUE(
      store_.Transact(core::TxMode::kReadWrite, [](core::Tx& tx) { return tx.Reservations().Delete("ann", "train"); })
          .ok());
  clock_.Advance(InventoryControllerOptions{}.gone_recheck + 1s);
  WaitStored("a100-0", [](const auto& n) { return !n.has_value(); });
}

}  // namespace
}  // namespace septa::reconcile
