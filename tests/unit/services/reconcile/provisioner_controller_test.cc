// The provisioner against kubesim on the fake store: a virtual cluster's
// host objects are created with the right contents and it turns READY;
// a second pass writes nothing; host faults turn conditions False, then it
// recovers; a resize updates in place; drift is repaired and said so;
// delete leaves nothing behind; orphans are removed.
#include "services/reconcile/provisioner_controller.h"

#include <gtest/gtest.h>

#include "tests/support/fake_store.h"
#include "tests/unit/services/reconcile/provisioner_fixture.h"
#include "tests/unit/services/reconcile/recording_reconciler.h"

namespace septa::reconcile {
namespace {

using namespace testing;  // NOLINT: the fixture's resources and json
using namespace std::chrono_literals;
using tenancy::ConditionStatus;
using tenancy::VirtualCluster;
using tenancy::VirtualClusterState;

class reconcileProvisioner : public ::testing::Test, public testing::ProvisionerFixture {
 protected:
  void SetUp() override { ASSERT_NO_FATAL_FAILURE(StartHost(store_)); }
  void TearDown() override { provisioner_.reset(); }  // before the store it uses

  void Seed(const std::string& vcluster, int gpu) { ASSERT_NO_FATAL_FAILURE(SeedVCluster(store_, vcluster, gpu)); }
  std::optional<VirtualCluster> Stored(const std::string& vcluster) { return StoredVCluster(store_, vcluster); }
  bool IsReady(const std::string& vcluster) { return IsReadyIn(store_, vcluster); }
  std::map<std::string, std::string> Versions(const std::string& vcluster) { return HostVersions(vcluster); }
  void Mutate(const std::string& vcluster, const std::function<void(VirtualCluster&)>& change) {
    ASSERT_NO_FATAL_FAILURE(UpdateVCluster(store_, vcluster, change));
    provisioner_->Enqueue({"ann", vcluster});
  }

  core::FakeStore store_;
};

TEST_F(reconcileProvisioner, CreatesEveryHostObjectTurnsReadyAndASecondPassWritesNothing) {
  Seed("train", 0);
  ASSERT_NO_FATAL_FAILURE(StartProvisioner(store_));
  ASSERT_TRUE(Eventually([&] { return IsReady("train"); }));

  const std::string ns = tenancy::host::HostNamespaceName("ann", "train");
  auto vc = *Stored("train");
  EXPECT_EQ(vc.host_namespace, ns);
  EXPECT_EQ(vc.endpoint, core::FakeControlPlanes::EndpointOf("ann", "train"));
  for (const char* type : {"NamespaceReady", "QuotaReady", "QueueReady", "ControlPlaneReady"}) {
    const tenancy::Condition* c = ConditionOf(vc, type);
    ASSERT_NE(c, nullptr) << type;
    EXPECT_EQ(c->status, ConditionStatus::kTrue) << type << ": " << c->message;
    EXPECT_EQ(c->observed_generation, vc.generation) << type;
  }
  EXPECT_EQ(ConditionOf(vc, "Drifted"), nullptr) << "creating is not drift";

  // Read back from the host: what RenderHostObjects says, applied.
  const json namespace_object = Get(kube::kNamespaces, "", ns);
  EXPECT_EQ(namespace_object["metadata"]["labels"].value("pod-security.kubernetes.io/enforce", ""), "restricted");
  EXPECT_EQ(namespace_object["metadata"]["labels"].value("septa.dev/tenant", ""), "ann");
  const json quota = Get(kube::kResourceQuotas, ns, "septa-quota");
  EXPECT_EQ(quota["spec"]["hard"].value("requests.nvidia.com/gpu", quota["spec"]["hard"].value("nvidia.com/gpu", "")),
            "1")
      << quota.dump();
  EXPECT_EQ(quota["spec"]["hard"].value("pods", ""), "50");
  const json leaf = Get(kube::kKaiQueues, "", ns);
  EXPECT_EQ(leaf["spec"].value("parentQueue", ""), "septa-tier-dedicated") << leaf.dump();
  EXPECT_FALSE(Get(kube::kKaiQueues, "", "septa-tier-dedicated").is_null());
  const json node = Get(kube::kNodes, "", "a100-0");
  EXPECT_EQ(node["metadata"]["labels"].value(tenancy::host::ReservedNodeLabel(ns), ""), "dedicated");
  EXPECT_EQ(HostObjectsOf("ann", "train").size(), 9u) << ::testing::PrintToString(HostObjectsOf("ann", "train"));
  EXPECT_TRUE(planes_.Has("ann", "train"));

  // Level-based and idempotent: reconciling a converged virtual cluster writes nothing.
  const auto versions = Versions("train");
  const std::int64_t row_version = vc.version;
  provisioner_->Enqueue({"ann", "train"});
  provisioner_->Resync();
  ASSERT_TRUE(provisioner_->AwaitIdle(10s));
  EXPECT_EQ(Versions("train"), versions);
  EXPECT_EQ(Stored("train")->version, row_version);
}

TEST_F(reconcileProvisioner, ARestartReconcilesEachVirtualClusterOnceAndWritesNothing) {
  for (int gpu = 0; gpu < 3; ++gpu) Seed("train-" + std::to_string(gpu), gpu);
  ASSERT_NO_FATAL_FAILURE(StartProvisioner(store_));
  ASSERT_TRUE(Eventually([&] { return IsReady("train-0") && IsReady("train-1") && IsReady("train-2"); }));
  std::map<std::string, std::map<std::string, std::string>> versions;
  std::map<std::string, std::int64_t> rows;
  for (int gpu = 0; gpu < 3; ++gpu) {
    const std::string vc = "train-" + std::to_string(gpu);
    versions[vc] = Versions(vc);
    rows[vc] = Stored(vc)->version;
  }
  auto reconciles = [&] {
    double total = 0;
    for (const char* result : {"success", "requeue", "error"}) {
      total += MetricValue(registry_, "septa_reconcile_total", {{"controller", "provisioner"}, {"result", result}});
    }
    return total;
  };
  // Counted from when the first provisioner has stopped: events of its own
  // last writes may still have it reconcile after the clusters read READY.
  provisioner_.reset();
  const double before = reconciles();
  ASSERT_NO_FATAL_FAILURE(StartProvisioner(store_));
  ASSERT_TRUE(provisioner_->AwaitIdle(10s));
  // Every informer, the scheduler kinds' included, listed before the workers
  // ran: their first events did not queue a converged virtual cluster again.
  EXPECT_EQ(reconciles() - before, 3);
  for (int gpu = 0; gpu < 3; ++gpu) {
    const std::string vc = "train-" + std::to_string(gpu);
    EXPECT_EQ(Versions(vc), versions[vc]) << vc;
    EXPECT_EQ(Stored(vc)->version, rows[vc]) << vc;
  }
}

TEST_F(reconcileProvisioner, HostFaultsTurnConditionsFalseThenItRecovers) {
  Seed("train", 0);
  // Faults last until the test has seen the False condition: a polled
  // transient state is missed when the retry wins the race.
  failing_writes_ = kFaultsUntilReleased;
  ASSERT_NO_FATAL_FAILURE(StartProvisioner(store_));
  ASSERT_TRUE(Eventually([&] {
    auto vc = Stored("train");
    const tenancy::Condition* c = vc ? ConditionOf(*vc, "NamespaceReady") : nullptr;
    return c && c->status == ConditionStatus::kFalse && c->reason == "HostServiceUnavailable";
  }));
  EXPECT_FALSE(IsReady("train"));
  failing_writes_ = 0;
  ASSERT_TRUE(Eventually([&] { return IsReady("train"); })) << "retried with backoff after the host recovered";

  // A conflict is reported the same way, and retried.
  failing_status_ = 409;
  failing_writes_ = kFaultsUntilReleased;
  ASSERT_TRUE(
      host_->Delete(kube::kResourceQuotas, tenancy::host::HostNamespaceName("ann", "train"), "septa-quota").ok());
  ASSERT_TRUE(Eventually([&] {
    auto vc = Stored("train");
    const tenancy::Condition* c = ConditionOf(*vc, "QuotaReady");
    return c->status == ConditionStatus::kFalse && c->reason == "HostConflict";
  }));
  failing_writes_ = 0;
  ASSERT_TRUE(
      Eventually([&] { return ConditionOf(*Stored("train"), "QuotaReady")->status == ConditionStatus::kTrue; }));

  // The control plane failing is reported the same way, and retried.
  planes_.FailNext(Unavailable("the control plane store is down"), 1);
  Mutate("train", [](VirtualCluster& vc) {
    vc.quota.pods = 60;
    ++vc.generation;
  });
  ASSERT_TRUE(Eventually([&] {
    auto vc = Stored("train");
    const tenancy::Condition* c = ConditionOf(*vc, "QuotaReady");
    return c->observed_generation == vc->generation &&
           ConditionOf(*vc, "ControlPlaneReady")->status == ConditionStatus::kTrue;
  }));
}

TEST_F(reconcileProvisioner, AResizeUpdatesQuotaAndQueueInPlace) {
  Seed("train", 0);
  ASSERT_NO_FATAL_FAILURE(StartProvisioner(store_));
  ASSERT_TRUE(Eventually([&] { return IsReady("train"); }));
  const std::string ns = tenancy::host::HostNamespaceName("ann", "train");
  const std::string uid = Get(kube::kResourceQuotas, ns, "septa-quota")["metadata"].value("uid", "");
  Mutate("train", [](VirtualCluster& vc) {
    vc.quota.cpu_milli = 16000;
    vc.queue.over_quota_weight = 3;
    ++vc.generation;
  });
  ASSERT_TRUE(Eventually([&] {
    return Get(kube::kResourceQuotas, ns, "septa-quota")["spec"]["hard"].value("requests.cpu", "") == "16";
  })) << Get(kube::kResourceQuotas, ns, "septa-quota").dump();
  EXPECT_EQ(Get(kube::kResourceQuotas, ns, "septa-quota")["metadata"].value("uid", ""), uid) << "updated, not replaced";
  EXPECT_EQ(Get(kube::kKaiQueues, "", ns)["spec"]["resources"]["gpu"].value("overQuotaWeight", 0), 3);
  ASSERT_TRUE(Eventually([&] {
    auto vc = Stored("train");
    return ConditionOf(*vc, "QuotaReady")->observed_generation == 2 && vc->state == VirtualClusterState::kReady;
  }));
}

// A limit taken away (0: none) leaves the host's quota, though everything
// still rendered has its value there (found by the crash run).
TEST_F(reconcileProvisioner, AQuotaLimitTakenAwayLeavesTheHost) {
  Seed("train", 0);
  ASSERT_NO_FATAL_FAILURE(StartProvisioner(store_));
  ASSERT_TRUE(Eventually([&] { return IsReady("train"); }));
  const std::string ns = tenancy::host::HostNamespaceName("ann", "train");
  ASSERT_EQ(Get(kube::kResourceQuotas, ns, "septa-quota")["spec"]["hard"].value("pods", ""), "50");
  Mutate("train", [](VirtualCluster& vc) {
    vc.quota.pods = 0;
    ++vc.generation;
  });
  ASSERT_TRUE(Eventually([&] {
    return !Get(kube::kResourceQuotas, ns, "septa-quota")["spec"]["hard"].contains("pods");
  })) << Get(kube::kResourceQuotas, ns, "septa-quota").dump();
  EXPECT_EQ(Get(kube::kResourceQuotas, ns, "septa-quota")["spec"]["hard"].value("requests.cpu", ""), "8")
      << "the other limits stay";
}

TEST_F(reconcileProvisioner, DriftIsRepairedAndSaidSo) {
  Seed("train", 0);
  ASSERT_NO_FATAL_FAILURE(StartProvisioner(store_));
  ASSERT_TRUE(Eventually([&] { return IsReady("train"); }));
  const std::string ns = tenancy::host::HostNamespaceName("ann", "train");
  ASSERT_TRUE(host_->Delete(kube::kResourceQuotas, ns, "septa-quota").ok());
  ASSERT_TRUE(Eventually([&] { return !Get(kube::kResourceQuotas, ns, "septa-quota").is_null(); }))
      << "the informer's delete event brings it back";
  // The restoring pass sets Drifted True; the pass its own write triggers
  // finds the host as rendered and sets it False. True is transient, but
  // NoDrift is only ever written over a True, so it shows both passes ran.
  ASSERT_TRUE(Eventually([&] {
    auto vc = Stored("train");
    const tenancy::Condition* c = ConditionOf(*vc, "Drifted");
    return c && c->status == ConditionStatus::kFalse && c->reason == "NoDrift";
  }));
  // Converged and not drifted: another pass writes nothing.
  const std::int64_t row_version = Stored("train")->version;
  provisioner_->Enqueue({"ann", "train"});
  ASSERT_TRUE(provisioner_->AwaitIdle(10s));
  EXPECT_EQ(Stored("train")->version, row_version);

  // Edited by someone else: the fields Septa owns are put back.
  ASSERT_TRUE(host_
                  ->Patch(kube::kKaiQueues, "", ns, kube::PatchType::kMerge,
                          json{{"spec", {{"parentQueue", "somewhere-else"}}}}.dump())
                  .ok());
  ASSERT_TRUE(Eventually(
      [&] { return Get(kube::kKaiQueues, "", ns)["spec"].value("parentQueue", "") == "septa-tier-dedicated"; }));

  // The whole namespace deleted (its contents with it): everything comes back.
  ASSERT_TRUE(host_->Delete(kube::kNamespaces, "", ns).ok());
  ASSERT_TRUE(Eventually([&] {
    const json quota = Get(kube::kResourceQuotas, ns, "septa-quota");
    const json space = Get(kube::kNamespaces, "", ns);
    return !quota.is_null() && !space.is_null() && !space["metadata"].contains("deletionTimestamp") &&
           HostObjectsOf("ann", "train").size() == 9;
  }));
  EXPECT_TRUE(IsReady("train"));
}

TEST_F(reconcileProvisioner, DeleteLeavesNothingBehindThenReleases) {
  Seed("train", 0);
  ASSERT_NO_FATAL_FAILURE(StartProvisioner(store_));
  ASSERT_TRUE(Eventually([&] { return IsReady("train"); }));
  ASSERT_FALSE(HostObjectsOf("ann", "train").empty());
  Mutate("train", [](VirtualCluster& vc) { vc.state = VirtualClusterState::kDeleting; });
  ASSERT_TRUE(Eventually([&] { return !Stored("train").has_value(); }));
  EXPECT_EQ(HostObjectsOf("ann", "train"), std::vector<std::string>{});
  const std::string ns = tenancy::host::HostNamespaceName("ann", "train");
  EXPECT_TRUE(Get(kube::kNamespaces, "", ns).is_null());
  EXPECT_FALSE(Get(kube::kNodes, "", "a100-0")["metadata"]["labels"].contains(tenancy::host::ReservedNodeLabel(ns)));
  EXPECT_FALSE(Get(kube::kKaiQueues, "", "septa-tier-dedicated").is_null()) << "the shared parent queue stays";
  EXPECT_FALSE(planes_.Has("ann", "train"));
  bool released = false;
  ASSERT_TRUE(store_
                  .Transact(core::TxMode::kReadOnly,
                            [&](core::Tx& tx) -> Status {
                              released = tx.Reservations().Get("ann", "train").status().code() == Code::kNotFound;
                              auto audit = tx.Audit().List("tenants/ann/vclusters/train", 10);
                              SEPTA_RETURN_IF_ERROR(audit);
                              EXPECT_EQ(audit->at(0).action, "vcluster.release");
                              return Status::Ok();
                            })
                  .ok());
  EXPECT_TRUE(released);
}

TEST_F(reconcileProvisioner, OrphansOfAVirtualClusterWithoutARowAreRemoved) {
  Seed("train", 0);
  Seed("keep", 1);
  ASSERT_NO_FATAL_FAILURE(StartProvisioner(store_));
  ASSERT_TRUE(Eventually([&] { return IsReady("train") && IsReady("keep"); }));
  provisioner_->Stop();
  // A crash between removing the row and the host objects: the row is gone, they are not.
  ASSERT_TRUE(store_
                  .Transact(core::TxMode::kReadWrite,
                            [&](core::Tx& tx) -> Status {
                              SEPTA_RETURN_IF_ERROR(tx.Reservations().Delete("ann", "train"));
                              auto vc = tx.VirtualClusters().Get("ann", "train");
                              SEPTA_RETURN_IF_ERROR(vc);
                              return tx.VirtualClusters().Delete("ann", "train", vc->version);
                            })
                  .ok());
  planes_.Add("ann", "ghost");
  ASSERT_NO_FATAL_FAILURE(StartProvisioner(store_));
  ASSERT_TRUE(Eventually([&] { return HostObjectsOf("ann", "train").empty() && !planes_.Has("ann", "ghost"); }));
  EXPECT_FALSE(planes_.Has("ann", "train"));
  EXPECT_EQ(HostObjectsOf("ann", "keep").size(), 9u) << "another virtual cluster's objects stay";
  EXPECT_TRUE(IsReady("keep"));
}

// A virtual cluster named by an earlier name function keeps its namespace:
// the provisioner renders, pins and deletes by the stored name, never by
// HostNamespaceName again; without a row, its namespace is found by its labels.
TEST_F(reconcileProvisioner, TheStoredHostNamespaceIsKeptAndFoundAgainWithoutARow) {
  const std::string stored = "septa-ann-x-train-named-earlier";
  const std::string derived = tenancy::host::HostNamespaceName("ann", "train");
  ASSERT_NE(stored, derived);
  ASSERT_NO_FATAL_FAILURE(SeedVCluster(store_, "train", 0, stored));
  Seed("gone", 1);
  ASSERT_NO_FATAL_FAILURE(
      UpdateVCluster(store_, "gone", [](VirtualCluster& vc) { vc.host_namespace = "septa-ann-x-gone-named-earlier"; }));
  ASSERT_NO_FATAL_FAILURE(StartProvisioner(store_));
  ASSERT_TRUE(Eventually([&] { return IsReady("train") && IsReady("gone"); }));
  EXPECT_EQ(Stored("train")->host_namespace, stored);
  EXPECT_TRUE(Stored("train")->on_host);
  EXPECT_FALSE(Get(kube::kNamespaces, "", stored).is_null());
  EXPECT_TRUE(Get(kube::kNamespaces, "", derived).is_null());
  EXPECT_FALSE(Get(kube::kResourceQuotas, stored, "septa-quota").is_null());
  EXPECT_FALSE(Get(kube::kKaiQueues, "", stored).is_null());
  EXPECT_EQ(Get(kube::kNodes, "", "a100-0")["metadata"]["labels"].value(tenancy::host::ReservedNodeLabel(stored), ""),
            "dedicated");

  Mutate("train", [](VirtualCluster& vc) { vc.state = VirtualClusterState::kDeleting; });
  ASSERT_TRUE(Eventually([&] { return !Stored("train").has_value(); }));
  EXPECT_TRUE(Get(kube::kNamespaces, "", stored).is_null());
  EXPECT_FALSE(
      Get(kube::kNodes, "", "a100-0")["metadata"]["labels"].contains(tenancy::host::ReservedNodeLabel(stored)));

  // Its row gone while no provisioner ran: the namespace its labels name goes too.
  provisioner_->Stop();
  ASSERT_TRUE(store_
                  .Transact(core::TxMode::kReadWrite,
                            [&](core::Tx& tx) -> Status {
                              SEPTA_RETURN_IF_ERROR(tx.Reservations().Delete("ann", "gone"));
                              auto vc = tx.VirtualClusters().Get("ann", "gone");
                              SEPTA_RETURN_IF_ERROR(vc);
                              return tx.VirtualClusters().Delete("ann", "gone", vc->version);
                            })
                  .ok());
  ASSERT_NO_FATAL_FAILURE(StartProvisioner(store_));
  ASSERT_TRUE(Eventually([&] { return Get(kube::kNamespaces, "", "septa-ann-x-gone-named-earlier").is_null(); }));
  EXPECT_FALSE(Get(kube::kNodes, "", "a100-0")["metadata"]["labels"].contains(
      tenancy::host::ReservedNodeLabel("septa-ann-x-gone-named-earlier")));
}

TEST_F(reconcileProvisioner, WithTheDefaultSchedulerThereAreNoQueuesAndQueueReadySaysSo) {
  Seed("train", 0);
  ASSERT_NO_FATAL_FAILURE(StartProvisioner(store_, tenancy::host::Scheduler::kDefault));
  ASSERT_TRUE(Eventually([&] { return IsReady("train"); }));
  auto vc = *Stored("train");
  EXPECT_EQ(ConditionOf(vc, "QueueReady")->reason, "NotConfigured");
  const auto objects = HostObjectsOf("ann", "train");
  EXPECT_EQ(objects.size(), 8u) << ::testing::PrintToString(objects);
  EXPECT_TRUE(Get(kube::kKaiQueues, "", tenancy::host::HostNamespaceName("ann", "train")).is_null());
}

TEST_F(reconcileProvisioner, KueueModeWritesAClusterQueueInTheTenantsCohortAndDeleteKeepsSharedFlavors) {
  Seed("train", 0);
  ASSERT_NO_FATAL_FAILURE(StartProvisioner(store_, tenancy::host::Scheduler::kKueue));
  ASSERT_TRUE(Eventually([&] { return IsReady("train"); }));
  const std::string ns = tenancy::host::HostNamespaceName("ann", "train");
  const json cluster_queue = Get(kube::kClusterQueues, "", ns);
  EXPECT_EQ(cluster_queue["spec"].value("cohortName", ""), "ann") << cluster_queue.dump();
  EXPECT_EQ(Get(kube::kLocalQueues, ns, "septa")["spec"].value("clusterQueue", ""), ns);
  auto flavors = host_->List(kube::kResourceFlavors, "");
  ASSERT_TRUE(flavors.ok());
  EXPECT_FALSE(flavors->items.empty());
  EXPECT_TRUE(Get(kube::kKaiQueues, "", ns).is_null()) << "no KAI queue in Kueue mode";

  Mutate("train", [](VirtualCluster& vc) { vc.state = VirtualClusterState::kDeleting; });
  ASSERT_TRUE(Eventually([&] { return !Stored("train").has_value(); }));
  EXPECT_EQ(HostObjectsOf("ann", "train"), std::vector<std::string>{});
  auto flavors_after = host_->List(kube::kResourceFlavors, "");
  ASSERT_TRUE(flavors_after.ok());
  EXPECT_EQ(flavors_after->items.size(), flavors->items.size()) << "flavors are shared: they stay";
}

TEST_F(reconcileProvisioner, ExclusiveNodesAreTaintedAndLabelledThenLetGoOnDelete) {
  ASSERT_TRUE(
      store_
          .Transact(core::TxMode::kReadWrite,
                    [&](core::Tx& tx) -> Status {
                      core::Tenant t;
                      t.name = "ben";
                      t.display_name = "Ben";
                      t.trust_tier = "exclusive";
                      t.version = 1;
                      SEPTA_RETURN_IF_ERROR(tx.Tenants().Insert(t));
                      VirtualCluster vc;
                      vc.tenant = "ben";
                      vc.name = "solo";
                      vc.capacity.tier = gpu::Tier::kExclusive;
                      vc.capacity.count = 1;
                      vc.conditions = {{"CapacityReady", ConditionStatus::kTrue, "CapacityReserved", "", {}, 1}};
                      SEPTA_RETURN_IF_ERROR(tx.VirtualClusters().Insert(vc));
                      tenancy::Reservation r;
                      r.tenant = "ben";
                      r.vcluster = "solo";
                      r.tier = gpu::Tier::kExclusive;
                      r.nodes = {"a100-1"};
                      return tx.Reservations().Insert(r);
                    })
          .ok());
  ASSERT_NO_FATAL_FAILURE(StartProvisioner(store_));
  auto state = [&] {
    std::optional<VirtualCluster> out;
    EXPECT_TRUE(store_
                    .Transact(core::TxMode::kReadOnly,
                              [&](core::Tx& tx) -> Status {
                                if (auto got = tx.VirtualClusters().Get("ben", "solo"); got.ok()) out = *got;
                                return Status::Ok();
                              })
                    .ok());
    return out;
  };
  ASSERT_TRUE(Eventually([&] {
    auto vc = state();
    return vc && vc->state == VirtualClusterState::kReady;
  }));
  const std::string ns = tenancy::host::HostNamespaceName("ben", "solo");
  auto taints_of = [&] { return Get(kube::kNodes, "", "a100-1")["spec"].value("taints", json::array()); };
  json node = Get(kube::kNodes, "", "a100-1");
  EXPECT_EQ(node["metadata"]["labels"].value(tenancy::host::kExclusiveTenantKey, ""), "ben");
  EXPECT_EQ(node["metadata"]["labels"].value(tenancy::host::ReservedNodeLabel(ns), ""), "exclusive");
  EXPECT_EQ(taints_of(), json::parse(R"([{"key":"septa.dev/exclusive-tenant","value":"ben","effect":"NoSchedule"}])"));
  EXPECT_FALSE(Get(kube::kNodes, "", "a100-0")["metadata"]["labels"].contains(tenancy::host::kExclusiveTenantKey));

  ASSERT_TRUE(store_
                  .Transact(core::TxMode::kReadWrite,
                            [&](core::Tx& tx) -> Status {
                              auto vc = tx.VirtualClusters().Get("ben", "solo");
                              SEPTA_RETURN_IF_ERROR(vc);
                              VirtualCluster next = *vc;
                              next.state = VirtualClusterState::kDeleting;
                              next.version = vc->version + 1;
                              return tx.VirtualClusters().Update(next, vc->version);
                            })
                  .ok());
  provisioner_->Enqueue({"ben", "solo"});
  ASSERT_TRUE(Eventually([&] { return !state().has_value(); }));
  node = Get(kube::kNodes, "", "a100-1");
  EXPECT_FALSE(node["metadata"]["labels"].contains(tenancy::host::kExclusiveTenantKey));
  EXPECT_FALSE(node["metadata"]["labels"].contains(tenancy::host::ReservedNodeLabel(ns)));
  EXPECT_EQ(taints_of(), json::array());
}

// A host without the scheduler's kinds (CRDs not installed yet).
class reconcileProvisionerWithoutSchedulerKinds : public ::testing::Test, public testing::ProvisionerFixture {
 protected:
  void SetUp() override { ASSERT_NO_FATAL_FAILURE(StartHost(store_, /*scheduler_crds=*/false)); }
  void TearDown() override { provisioner_.reset(); }
  core::FakeStore store_;
};

TEST_F(reconcileProvisionerWithoutSchedulerKinds, StartsWithoutWaitingForThemAndQueueReadySaysWhatIsMissing) {
  ASSERT_NO_FATAL_FAILURE(SeedVCluster(store_, "train", 0));
  const Status started = StartProvisionerWithin(store_, tenancy::host::Scheduler::kKai, 2s);
  ASSERT_TRUE(started.ok()) << started.ToString();
  ASSERT_TRUE(Eventually([&] {
    auto vc = StoredVCluster(store_, "train");
    const tenancy::Condition* queue = vc ? ConditionOf(*vc, "QueueReady") : nullptr;
    return queue && queue->status == ConditionStatus::kFalse && queue->reason == "HostKindMissing";
  }));
  auto vc = StoredVCluster(store_, "train");
  EXPECT_EQ(ConditionOf(*vc, "NamespaceReady")->status, ConditionStatus::kTrue);
  EXPECT_NE(ConditionOf(*vc, "QueueReady")->message.find("queues.scheduling.run.ai"), std::string::npos)
      << ConditionOf(*vc, "QueueReady")->message;
  EXPECT_EQ(vc->state, VirtualClusterState::kProvisioning);
}

}  // namespace
}  // namespace septa::reconcile
