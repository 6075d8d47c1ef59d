// The provisioner against an in-process kubesim (which serves the KAI and
// Kueue kinds), on any
// Store, with a FakeClock and FakeControlPlanes: shared by the FakeStore and
// the PostgreSQL tests.
#pragma once

#include <gtest/gtest.h>

#include <prometheus/registry.h>

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <thread>
#include <tuple>

#include "gpu/catalog.h"
#include "gpu/mig_parted.h"
#include "services/core/store.h"
#include "services/kube/client.h"
#include "services/kube/resources.h"
#include "services/kubesim/kubesim.h"
#include "services/reconcile/host_kinds.h"
#include "services/reconcile/inventory_controller.h"
#include "services/reconcile/provisioner_controller.h"
#include "tenancy/host/names.h"
#include "tests/support/fake_clock.h"
#include "tests/support/fake_control_planes.h"

namespace septa::reconcile::testing {

using nlohmann::json;
using namespace std::chrono_literals;

inline constexpr const char* kProvisionerInventory = R"(
nodes:
  - name: a100-0
    cpu: "64"
    memory: 512Gi
    gpus: {model: A100-80GB, count: 4}
  - name: a100-1
    cpu: "64"
    memory: 512Gi
    gpus: {model: A100-80GB, count: 4}
)";

class ProvisionerFixture {
 public:
  // Starts kubesim (faults as `failing_writes_` says; the KAI and Kueue
  // kinds served unless `scheduler_crds` is false) and syncs the inventory
  // into `store`.
  void StartHost(core::Store& store, bool scheduler_crds = true) {
    kubesim::KubeSimOptions options;
    options.tick_interval = 5ms;
    options.scheduler_crds = scheduler_crds;
    options.inventory = *kubesim::ParseInventory(kProvisionerInventory, "test");
    options.fault = [this](const http::Request& request) -> std::optional<http::HttpStatus> {
      if (request.method() == boost::beast::http::verb::patch && failing_writes_.load() > 0) {
        --failing_writes_;
        return static_cast<http::HttpStatus>(failing_status_.load());
      }
      if (request.method() == boost::beast::http::verb::delete_ && failing_deletes_.load() > 0) {
        --failing_deletes_;
        return static_cast<http::HttpStatus>(failing_status_.load());
      }
      return std::nullopt;
    };
    sim_ = std::make_unique<kubesim::KubeSim>(options);
    ASSERT_TRUE(sim_->Start().ok());
    kube::ClientOptions client_options;
    client_options.max_retries = 0;
    client_options.sleep = [](std::chrono::milliseconds) {};
    host_ = std::move(*kube::Client::Create(*kube::ParseKubeconfig(*sim_->AdminKubeconfig()), client_options));
    InventoryController inventory({}, store, *host_, gpu::Catalog::Default(), mig_configs_, clock_, registry_);
    ASSERT_TRUE(inventory.Start(10s).ok());
    ASSERT_TRUE(inventory.AwaitIdle(10s));
  }

  void StartProvisioner(core::Store& store, tenancy::host::Scheduler scheduler = tenancy::host::Scheduler::kKai) {
    ASSERT_TRUE(StartProvisionerWithin(store, scheduler, 10s).ok());
  }
  Status StartProvisionerWithin(core::Store& store, tenancy::host::Scheduler scheduler,
                                std::chrono::milliseconds timeout) {
    ProvisionerControllerOptions options;
    options.workers = 2;
    options.render.scheduler = scheduler;
    // No periodic resync within a test: what happens is what a trigger caused.
    options.resync_interval = std::chrono::hours(24);
    options.sleep_reservation = sleep_reservation_;
    options.ledger = &ledger_;
    provisioner_ = std::make_unique<ProvisionerController>(options, store, *host_, &planes_, clock_, registry_);
    return provisioner_->Start(timeout);
  }

  // Bounded: waits for the controller to settle, moving the fake clock past
  // any backoff, until `ok` holds.
  bool Eventually(const std::function<bool()>& ok) {
    for (int i = 0; i < 2000; ++i) {
      EXPECT_TRUE(provisioner_->AwaitIdle(10s));
      if (ok()) return true;
      clock_.Advance(100ms);
      std::this_thread::sleep_for(2ms);
    }
    return false;
  }

  // Every object on the host with the virtual cluster's labels, as "Kind/name".
  std::vector<std::string> HostObjectsOf(const std::string& tenant, const std::string& vcluster) {
    std::set<std::string> found;
    kube::ListOptions options;
    options.label_selector = VClusterSelector(tenant, vcluster);
    for (auto scheduler : {tenancy::host::Scheduler::kKai, tenancy::host::Scheduler::kKueue}) {
      for (const HostKind& kind : ManagedHostKinds(scheduler)) {
        auto listed = host_->ListAll(kind.resource, "", options);
        if (!listed.ok()) continue;  // a kind the host does not serve holds nothing
        for (const auto& o : listed->items) found.insert(kind.kind + "/" + o.ToJson()["metadata"].value("name", ""));
      }
    }
    return std::vector<std::string>(found.begin(), found.end());
  }

  // Tenant "ann" (dedicated) and its virtual cluster `vcluster` holding GPU `gpu` of a100-0, as the use case writes
  // them.
  // `host_namespace`: the one stored with it ("": a row of an older septad, named by the provisioner).
  static void SeedVCluster(core::Store& store, const std::string& vcluster, int gpu,
                           const std::string& host_namespace = "") {
    ASSERT_TRUE(
        store
            .Transact(
                core::TxMode::kReadWrite,
                [&](core::Tx& tx) -> Status {
                  if (!tx.Tenants().Get("ann").ok()) {
                    core::Tenant t;
                    t.name = "ann";
                    t.display_name = "Ann";
                    t.trust_tier = "dedicated";
                    t.version = 1;
                    SEPTA_RETURN_IF_ERROR(tx.Tenants().Insert(t));
                  }
                  tenancy::VirtualCluster vc;
                  vc.tenant = "ann";
                  vc.name = vcluster;
                  vc.capacity.tier = gpu::Tier::kDedicated;
                  vc.capacity.count = 1;
                  vc.quota = {.cpu_milli = 8000, .memory_mib = 32768, .pods = 50};
                  vc.conditions = {{"CapacityReady", tenancy::ConditionStatus::kTrue, "CapacityReserved", "", {}, 1}};
                  vc.host_namespace = host_namespace;
                  SEPTA_RETURN_IF_ERROR(tx.VirtualClusters().Insert(vc));
                  tenancy::Reservation r;
                  r.tenant = "ann";
                  r.vcluster = vcluster;
                  r.tier = gpu::Tier::kDedicated;
                  r.gpus = {{"a100-0", gpu}};
                  return tx.Reservations().Insert(r);
                })
            .ok());
  }

  static std::optional<tenancy::VirtualCluster> StoredVCluster(core::Store& store, const std::string& vcluster) {
    std::optional<tenancy::VirtualCluster> out;
    EXPECT_TRUE(store
                    .Transact(core::TxMode::kReadOnly,
                              [&](core::Tx& tx) -> Status {
                                auto got = tx.VirtualClusters().Get("ann", vcluster);
                                if (got.ok()) out = *got;
                                return Status::Ok();
                              })
                    .ok());
    return out;
  }

  // A user's update: bumps the version (and whatever `change` does).
  static void UpdateVCluster(core::Store& store, const std::string& vcluster,
                             const std::function<void(tenancy::VirtualCluster&)>& change) {
    ASSERT_TRUE(store
                    .Transact(core::TxMode::kReadWrite,
                              [&](core::Tx& tx) -> Status {
                                auto vc = tx.VirtualClusters().Get("ann", vcluster);
                                SEPTA_RETURN_IF_ERROR(vc);
                                tenancy::VirtualCluster next = *vc;
                                change(next);
                                next.version = vc->version + 1;
                                return tx.VirtualClusters().Update(next, vc->version);
                              })
                    .ok());
  }

  static bool IsReadyIn(core::Store& store, const std::string& vcluster) {
    auto vc = StoredVCluster(store, vcluster);
    return vc && vc->state == tenancy::VirtualClusterState::kReady;
  }

  static const tenancy::Condition* ConditionOf(const tenancy::VirtualCluster& vc, const char* type) {
    return tenancy::FindCondition(vc.conditions, type);
  }

  // resourceVersion of the virtual cluster's namespace, quota, leaf queue and reserved node.
  std::map<std::string, std::string> HostVersions(const std::string& vcluster) {
    std::map<std::string, std::string> out;
    const std::string ns = tenancy::host::HostNamespaceName("ann", vcluster);
    for (const auto& [r, name, n] : {std::tuple{kube::kNamespaces, ns, std::string()},
                                     std::tuple{kube::kResourceQuotas, std::string("septa-quota"), ns},
                                     std::tuple{kube::kKaiQueues, ns, std::string()},
                                     std::tuple{kube::kNodes, std::string("a100-0"), std::string()}}) {
      out[r.resource + "/" + name] = Get(r, n, name)["metadata"].value("resourceVersion", "");
    }
    return out;
  }

  json Get(const kube::Resource& r, const std::string& ns, const std::string& name) {
    auto got = host_->Get(r, ns, name);
    return got.ok() ? *got : json();
  }

  FakeClock clock_;
  prometheus::Registry registry_;
  gpu::MigPartedConfig mig_configs_ = gpu::StockMigPartedConfigs(gpu::Catalog::Default());
  // The next `failing_writes_` PATCH requests (applies, node patches) are answered with `failing_status_`.
  std::atomic<int> failing_writes_{0};
  static constexpr int kFaultsUntilReleased = 1 << 30;
  // The next `failing_deletes_` DELETE requests are answered with `failing_status_`.
  std::atomic<int> failing_deletes_{0};
  std::atomic<int> failing_status_{503};
  std::unique_ptr<kubesim::KubeSim> sim_;
  std::unique_ptr<kube::Client> host_;
  core::FakeControlPlanes planes_;
  SleepReservation sleep_reservation_ = SleepReservation::kKeep;
  core::CapacityLedger ledger_{gpu::Catalog::Default()};  // places a released reservation again on wake
  std::unique_ptr<ProvisionerController> provisioner_;
};

}  // namespace septa::reconcile::testing
