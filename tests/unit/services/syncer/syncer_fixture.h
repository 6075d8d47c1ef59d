// The syncer against real parts: an in-process kubesim as the host (its
// scheduler schedules kai-scheduler's pods, as KAI would), FakeStore rows,
// and the simulated virtual control planes (SimulatedControlPlanes over
// FakeVirtualObjectStore, ticking on their own thread so that workload
// controllers run) serving the virtual cluster the syncer watches.
#pragma once

#include <gtest/gtest.h>

#include <prometheus/registry.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "services/kube/client.h"
#include "services/kube/config.h"
#include "services/kube/resources.h"
#include "services/kubesim/kubesim.h"
#include "services/syncer/syncer_controller.h"
#include "services/vcp/simulated_control_planes.h"
#include "tenancy/host/names.h"
#include "tests/support/fake_store.h"
#include "tests/support/fake_virtual_object_store.h"
#include "tests/support/metric_value.h"

namespace septa::syncer::testing {

using nlohmann::json;
using namespace std::chrono_literals;

inline constexpr const char* kSyncerInventory = R"(
nodes:
  - name: cpu-0
    cpu: "32"
    memory: 128Gi
  - name: cpu-1
    cpu: "32"
    memory: 128Gi
  - name: gpu-0
    cpu: "64"
    memory: 512Gi
    gpus: {model: A100-80GB, count: 1}
)";

class SyncerFixture : public ::testing::Test {
 protected:
  static constexpr const char* kTenant = "acme";
  static constexpr const char* kVcluster = "train";

  void SetUp() override {
    kubesim::KubeSimOptions options;
    options.tick_interval = 5ms;
    options.inventory = *kubesim::ParseInventory(kSyncerInventory, "test");
    options.nodes.scheduler_names = {"default-scheduler", "kai-scheduler"};
    options.nodes.pod_start_delay = 20ms;
    options.fault = [this](const http::Request& request) -> std::optional<http::HttpStatus> {
      const std::string target(request.target());
      if (host_pod_watches_fail_ && target.starts_with("/api/v1/pods?") && target.find("watch=1") != target.npos) {
        return http::HttpStatus::service_unavailable;
      }
      return std::nullopt;
    };
    sim_ = std::make_unique<kubesim::KubeSim>(options);
    ASSERT_TRUE(sim_->Start().ok());
    host_ = Client(*sim_->AdminKubeconfig());

    planes_ = std::make_unique<vcp::SimulatedControlPlanes>(virtual_objects_,
                                                            vcp::SimulatedControlPlanesOptions{.tick_interval = 10ms});
    ASSERT_TRUE(planes_->Start().ok());
    ASSERT_TRUE(planes_->Ensure(kTenant, kVcluster).ok());
    virtual_ = Client(*planes_->AdminKubeconfig(kTenant, kVcluster));

    ASSERT_NO_FATAL_FAILURE(SeedVirtualCluster());
    ASSERT_TRUE(host_
                    ->Create(kube::kNamespaces, "",
                             {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", HostNamespace()}}}})
                    .ok());
    StartSyncer();
  }

  void TearDown() override {
    syncer_.reset();
    planes_.reset();
  }

  static std::unique_ptr<kube::Client> Client(const std::string& kubeconfig) {
    kube::ClientOptions options;
    options.max_retries = 0;
    return std::move(*kube::Client::Create(*kube::ParseKubeconfig(kubeconfig), options));
  }

  // Tenant acme (shared: Pod Security baseline), its virtual cluster train READY with no reservation.
  void SeedVirtualCluster() {
    ASSERT_TRUE(store_
                    .Transact(core::TxMode::kReadWrite,
                              [&](core::Tx& tx) -> Status {
                                core::Tenant t;
                                t.name = kTenant;
                                t.display_name = "Acme";
                                t.trust_tier = "shared";
                                t.version = 1;
                                SEPTA_RETURN_IF_ERROR(tx.Tenants().Insert(t));
                                tenancy::VirtualCluster vc;
                                vc.tenant = kTenant;
                                vc.name = kVcluster;
                                vc.capacity.tier = gpu::Tier::kShared;
                                vc.capacity.milli_gpu = 300;
                                vc.quota = {.cpu_milli = 8000, .memory_mib = 32768, .pods = 50};
                                vc.state = tenancy::VirtualClusterState::kReady;
                                vc.host_namespace = HostNamespace();
                                return tx.VirtualClusters().Insert(vc);
                              })
                    .ok());
  }

  // The virtual cluster's reservation: `milli_gpu` of GPU 0 of gpu-0 (as the
  // inventory controller and the capacity ledger would have written them).
  void ReserveShare(int milli_gpu) {
    ASSERT_TRUE(store_
                    .Transact(core::TxMode::kReadWrite,
                              [&](core::Tx& tx) -> Status {
                                gpu::InventoryNode node;
                                node.name = "gpu-0";
                                node.cpu_milli = 64000;
                                node.memory_mib = 512 * 1024;
                                node.labels = {{"kubernetes.io/hostname", "gpu-0"}};
                                node.gpus.push_back({"A100-80GB", 0, "GPU-gpu-0-0", false, {}});
                                SEPTA_RETURN_IF_ERROR(tx.Inventory().PutNode(node, TimePoint{}));
                                tenancy::Reservation r;
                                r.tenant = kTenant;
                                r.vcluster = kVcluster;
                                r.tier = gpu::Tier::kShared;
                                r.shares = {{"gpu-0", 0, milli_gpu, 0}};
                                return tx.Reservations().Insert(r);
                              })
                    .ok());
    syncer_->VirtualClusterChanged(std::string(kTenant) + "/" + kVcluster);
  }

  // `clock`: the syncer's (the fixture's system clock when null).
  // `planes`: the fixture's simulated ones when null. `shards`: those it
  // acts on (every key when null).
  void StartSyncer(const Clock* clock = nullptr, core::ControlPlanes* planes = nullptr,
                   reconcile::ShardLeases* shards = nullptr) {
    SyncerOptions options;
    options.workers = 2;
    options.resync_interval = 1h;       // what happens is what a trigger caused
    options.shard_check_interval = 1h;  // one that holds no shard keeps its watch
    options.shards = shards;
    options.settings.scheduler = tenancy::host::Scheduler::kKai;
    syncer_ = std::make_unique<SyncerController>(options, store_, *host_, planes ? *planes : *planes_,
                                                 clock ? *clock : clock_, registry_);
    ASSERT_TRUE(syncer_->Start(10s).ok());  // its first resync finds the virtual cluster
  }
  // The syncer's reconciles so far, whatever their result, by any syncer on registry_.
  double Reconciles() const {
    double total = 0;
    for (const char* result : {"success", "requeue", "error"}) {
      total += std::max(0.0, septa::testing::MetricValue(registry_, "septa_reconcile_total",
                                                         {{"controller", "syncer"}, {"result", result}}));
    }
    return total;
  }

  static std::string HostNamespace() { return tenancy::host::HostNamespaceName(kTenant, kVcluster); }
  // The virtual cluster as the translation sees it: names only (no tier, no reservation).
  static tenancy::sync::VirtualClusterView View() {
    tenancy::sync::VirtualClusterView view;
    view.tenant = kTenant;
    view.vcluster = kVcluster;
    view.host_namespace = HostNamespace();
    return view;
  }
  static std::string HostName(const std::string& name, const std::string& ns = "default") {
    return name + "-x-" + ns + "-x-" + kVcluster;
  }

  static json Pod(const std::string& name, json resources = json::object()) {
    return {
        {"apiVersion", "v1"},
        {"kind", "Pod"},
        {"metadata", {{"name", name}, {"namespace", "default"}, {"labels", {{"app", name}}}}},
        {"spec", {{"containers", json::array({{{"name", "main"}, {"image", "busybox"}, {"resources", resources}}})}}}};
  }

  std::optional<json> Get(kube::Client& client, const std::string& ns, const std::string& name) {
    auto got = client.Get(kube::kPods, ns, name);
    return got.ok() ? std::optional<json>(*got) : std::nullopt;
  }
  std::optional<json> HostPod(const std::string& name) { return Get(*host_, HostNamespace(), HostName(name)); }
  std::optional<json> VirtualPod(const std::string& name) { return Get(*virtual_, "default", name); }
  std::optional<json> VirtualNode(const std::string& name) {
    auto got = virtual_->Get(kube::kNodes, "", name);
    return got.ok() ? std::optional<json>(*std::move(got)) : std::nullopt;
  }
  std::vector<std::string> VirtualNodeNames() {
    std::vector<std::string> names;
    if (auto listed = virtual_->List(kube::kNodes, ""); listed.ok()) {
      for (const auto& item : listed->items) names.push_back(item.ToJson()["metadata"].value("name", ""));
    }
    return names;
  }
  std::vector<json> HostPods() {
    auto listed = host_->List(kube::kPods, HostNamespace());
    std::vector<json> out;
    if (listed.ok()) {
      for (const auto& item : listed->items) out.push_back(item.ToJson());
    }
    return out;
  }

  // Bounded: polls until `ok` holds (the parts run on their own threads).
  static bool Eventually(const std::function<bool()>& ok, std::chrono::milliseconds bound = 20s) {
    const auto deadline = std::chrono::steady_clock::now() + bound;
    while (std::chrono::steady_clock::now() < deadline) {
      if (ok()) return true;
      std::this_thread::sleep_for(10ms);
    }
    return ok();
  }

  // Whether `client`'s virtual cluster has the SyncRefused event of the
  // `kind` object `name` in default, its message about `field`.
  static bool HasRefusalEvent(kube::Client& client, const std::string& kind, const std::string& name,
                              const std::string& field) {
    auto events = client.List(kube::kEvents, "default");
    if (!events.ok()) return false;
    for (const auto& item : events->items) {
      const json event = item.ToJson();
      if (event.value("reason", "") == "SyncRefused" && event["involvedObject"].value("kind", "") == kind &&
          event["involvedObject"].value("name", "") == name && event.value("message", "").starts_with(field + ": ")) {
        return true;
      }
    }
    return false;
  }

  // Creates the virtual pod and waits until it runs on the host, bound up.
  json RunningPod(const std::string& name) {
    EXPECT_TRUE(virtual_->Create(kube::kPods, "default", Pod(name)).ok());
    EXPECT_TRUE(Eventually([&] {
      auto pod = VirtualPod(name);
      return pod && (*pod)["status"].value("phase", "") == "Running" && !(*pod)["spec"].value("nodeName", "").empty();
    })) << name
        << " did not run";
    return VirtualPod(name).value_or(json());
  }

  // The host refuses watches of pods while set: a syncer started then keeps
  // its first list of the host pods, as one whose watch lags.
  std::atomic<bool> host_pod_watches_fail_{false};
  SystemClock clock_;
  prometheus::Registry registry_;
  core::FakeStore store_;
  test::FakeVirtualObjectStore virtual_objects_;
  std::unique_ptr<kubesim::KubeSim> sim_;
  std::unique_ptr<kube::Client> host_;
  std::unique_ptr<vcp::SimulatedControlPlanes> planes_;
  std::unique_ptr<kube::Client> virtual_;
  std::unique_ptr<SyncerController> syncer_;  // last: stopped before the rest goes
};

}  // namespace septa::syncer::testing
