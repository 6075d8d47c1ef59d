// Sleep and wake through the provisioner, against kubesim on the fake store:
// sleep deletes the tenant's host workloads (pods and their controllers that
// Septa does not own) and keeps Septa's host objects, the control plane and
// the reservation (policy keep); wake brings it back to READY. With policy
// release, the reservation is freed once the workloads are gone and placed
// again on wake, all or nothing: a shortfall keeps it waking with
// CapacityReady False naming it until capacity frees up.
#include <gtest/gtest.h>

#include "services/kube/resources.h"
#include "services/reconcile/host_workloads.h"
#include "services/reconcile/provisioner_controller.h"
#include "tenancy/lifecycle.h"
#include "tests/support/fake_store.h"
#include "tests/unit/services/reconcile/provisioner_fixture.h"

namespace septa::reconcile {
namespace {

using namespace testing;  // NOLINT: the fixture's resources and json
using namespace std::chrono_literals;
using tenancy::ConditionStatus;
using tenancy::VirtualCluster;
using tenancy::VirtualClusterState;

class reconcileProvisionerSleep : public ::testing::Test, public testing::ProvisionerFixture {
 protected:
  void SetUp() override { ASSERT_NO_FATAL_FAILURE(StartHost(store_)); }
  void TearDown() override { provisioner_.reset(); }

  std::optional<VirtualCluster> Stored(const std::string& vcluster) { return StoredVCluster(store_, vcluster); }
  // What the use case writes for :sleep or :wake.
  void Request(const std::string& vcluster, Result<VirtualCluster> (*request)(const VirtualCluster&)) {
    ASSERT_NO_FATAL_FAILURE(UpdateVCluster(store_, vcluster, [&](VirtualCluster& vc) {
      auto next = request(vc);
      ASSERT_TRUE(next.ok()) << next.status().ToString();
      const std::int64_t version = vc.version;
      vc = *next;
      vc.version = version;  // bumped by UpdateVCluster
    }));
    provisioner_->Enqueue({"ann", vcluster});
  }
  bool ConditionIs(const std::string& vcluster, const char* type, ConditionStatus status, const std::string& reason) {
    auto vc = Stored(vcluster);
    const tenancy::Condition* c = vc ? ConditionOf(*vc, type) : nullptr;
    return c && c->status == status && c->reason == reason;
  }
  std::optional<tenancy::Reservation> ReservationOf(const std::string& vcluster) {
    std::optional<tenancy::Reservation> out;
    EXPECT_TRUE(store_
                    .Transact(core::TxMode::kReadOnly,
                              [&](core::Tx& tx) -> Status {
                                auto r = tx.Reservations().Get("ann", vcluster);
                                if (r.ok()) out = *r;
                                return Status::Ok();
                              })
                    .ok());
    return out;
  }
  // The state and conditions, for failure messages.
  std::string Describe(const std::string& vcluster) {
    auto vc = Stored(vcluster);
    if (!vc) return "no row";
    std::string out(tenancy::VirtualClusterStateName(vc->state));
    for (const auto& c : vc->conditions) {
      out +=
          "\n" + c.type + " " + std::string(tenancy::ConditionStatusName(c.status)) + " " + c.reason + ": " + c.message;
    }
    return out;
  }
  // Names of the objects of `resource` in `ns`.
  std::vector<std::string> Names(const kube::Resource& resource, const std::string& ns) {
    std::vector<std::string> names;
    auto listed = host_->ListAll(resource, ns);
    EXPECT_TRUE(listed.ok()) << listed.status().ToString();
    if (listed.ok()) {
      for (const auto& o : listed->items) names.push_back(o.ToJson()["metadata"].value("name", ""));
    }
    return names;
  }
  // What the syncer would put in the host namespace: a Deployment of two replicas and a bare pod.
  void RunWorkloads(const std::string& ns) {
    const json labels = {{"app", "web"}};
    const json pod_spec = {{"containers", json::array({json{{"name", "c"}, {"image", "busybox"}}})}};
    json deployment = {{"apiVersion", "apps/v1"},
                       {"kind", "Deployment"},
                       {"metadata", {{"name", "web"}, {"namespace", ns}}},
                       {"spec",
                        {{"replicas", 2},
                         {"selector", {{"matchLabels", labels}}},
                         {"template", {{"metadata", {{"labels", labels}}}, {"spec", pod_spec}}}}}};
    ASSERT_TRUE(host_->Create(kube::kDeployments, ns, deployment).ok());
    json pod = {
        {"apiVersion", "v1"}, {"kind", "Pod"}, {"metadata", {{"name", "bare"}, {"namespace", ns}}}, {"spec", pod_spec}};
    auto created = host_->Create(kube::kPods, ns, pod);
    ASSERT_TRUE(created.ok()) << created.status().ToString();
    ASSERT_TRUE(Eventually([&] { return Names(kube::kPods, ns).size() == 3; }))
        << ::testing::PrintToString(Names(kube::kPods, ns));
  }

  // What an admin's PATCH of the tenant's state writes; the NOTIFY of
  // migrations/0015 enqueues each of its virtual clusters, as here (when a
  // provisioner runs).
  void SetTenantState(core::TenantState state, const std::string& vcluster) {
    ASSERT_TRUE(store_
                    .Transact(core::TxMode::kReadWrite,
                              [&](core::Tx& tx) -> Status {
                                auto ann = tx.Tenants().Get("ann");
                                SEPTA_RETURN_IF_ERROR(ann);
                                core::Tenant next = *ann;
                                next.state = state;
                                next.version = ann->version + 1;
                                return tx.Tenants().Update(next, ann->version);
                              })
                    .ok());
    if (provisioner_) provisioner_->Enqueue({"ann", vcluster});
  }

  core::FakeStore store_;
};

TEST_F(reconcileProvisionerSleep, SleepDeletesHostWorkloadsAndKeepsEverythingElseThenWakeTurnsReady) {
  SeedVCluster(store_, "nap", 0);
  ASSERT_NO_FATAL_FAILURE(StartProvisioner(store_));
  ASSERT_TRUE(Eventually([&] { return IsReadyIn(store_, "nap"); }));
  const std::string ns = tenancy::host::HostNamespaceName("ann", "nap");
  ASSERT_NO_FATAL_FAILURE(RunWorkloads(ns));
  const auto septa_objects = HostObjectsOf("ann", "nap");
  const auto reservation = ReservationOf("nap");
  ASSERT_TRUE(reservation);
  EXPECT_EQ(ConditionOf(*Stored("nap"), "Sleeping"), nullptr) << "never asleep: no condition";

  ASSERT_NO_FATAL_FAILURE(Request("nap", &tenancy::RequestSleep));
  ASSERT_TRUE(Eventually([&] { return ConditionIs("nap", "Sleeping", ConditionStatus::kTrue, "WorkloadsStopped"); }));
  auto asleep = *Stored("nap");
  EXPECT_EQ(asleep.state, VirtualClusterState::kSleeping);
  EXPECT_EQ(ConditionOf(asleep, "Sleeping")->observed_generation, asleep.generation);
  EXPECT_EQ(Names(kube::kPods, ns), std::vector<std::string>{});
  EXPECT_EQ(Names(kube::kDeployments, ns), std::vector<std::string>{});
  EXPECT_EQ(Names(kube::kReplicaSets, ns), std::vector<std::string>{});
  // Septa's own host objects, the control plane (and with it every virtual object) and the reservation stay.
  EXPECT_EQ(HostObjectsOf("ann", "nap"), septa_objects);
  EXPECT_TRUE(planes_.Has("ann", "nap"));
  EXPECT_EQ(ReservationOf("nap"), reservation);
  auto left = DeleteHostWorkloads(*host_, ns);
  ASSERT_TRUE(left.ok()) << left.status().ToString();
  EXPECT_EQ(*left, 0);

  // Drift is still repaired while asleep.
  ASSERT_TRUE(host_->Delete(kube::kResourceQuotas, ns, "septa-quota").ok());
  ASSERT_TRUE(Eventually([&] { return !Get(kube::kResourceQuotas, ns, "septa-quota").is_null(); }));
  EXPECT_EQ(Stored("nap")->state, VirtualClusterState::kSleeping);

  ASSERT_NO_FATAL_FAILURE(Request("nap", &tenancy::RequestWake));
  ASSERT_TRUE(Eventually([&] { return IsReadyIn(store_, "nap"); }));
  auto awake = *Stored("nap");
  EXPECT_EQ(ConditionOf(awake, "Sleeping")->status, ConditionStatus::kFalse);
  EXPECT_EQ(ConditionOf(awake, "Sleeping")->reason, "Awake");
  for (const char* type : {"NamespaceReady", "QuotaReady", "QueueReady", "ControlPlaneReady"}) {
    EXPECT_EQ(ConditionOf(awake, type)->observed_generation, awake.generation) << type;
  }
  EXPECT_EQ(ReservationOf("nap"), reservation);
  // Workloads placed after the wake run undisturbed.
  ASSERT_NO_FATAL_FAILURE(RunWorkloads(ns));
  provisioner_->Enqueue({"ann", "nap"});
  ASSERT_TRUE(provisioner_->AwaitIdle(10s));
  EXPECT_EQ(Names(kube::kPods, ns).size(), 3u);
}

// Issue 28, H3: a tenant's pod labelled as Septa's own (a copy of the
// syncer's carries septa.dev/synced) was kept running through sleep, and
// with release its GPU went to another tenant. It is stopped like any other;
// and while the cluster sleeps the host's quota admits no new pod, so that
// nothing can start between the count and the release.
TEST_F(reconcileProvisionerSleep, ATenantPodLabelledAsSeptasStopsAndNoPodStartsWhileAsleep) {
  sleep_reservation_ = SleepReservation::kRelease;
  SeedVCluster(store_, "nap", 0);
  ASSERT_NO_FATAL_FAILURE(StartProvisioner(store_));
  ASSERT_TRUE(Eventually([&] { return IsReadyIn(store_, "nap"); }));
  const std::string ns = tenancy::host::HostNamespaceName("ann", "nap");
  const json pod_spec = {{"containers", json::array({json{{"name", "c"}, {"image", "busybox"}}})}};
  const json immortal = {{"apiVersion", "v1"},
                         {"kind", "Pod"},
                         {"metadata",
                          {{"name", "immortal"},
                           {"namespace", ns},
                           {"labels", {{"app.kubernetes.io/managed-by", "septa"}, {"septa.dev/synced", "true"}}}}},
                         {"spec", pod_spec}};
  ASSERT_TRUE(host_->Create(kube::kPods, ns, immortal).ok());

  ASSERT_NO_FATAL_FAILURE(Request("nap", &tenancy::RequestSleep));
  ASSERT_TRUE(Eventually([&] {
    return ConditionIs("nap", "Sleeping", ConditionStatus::kTrue, "WorkloadsStopped") && !ReservationOf("nap");
  })) << Describe("nap");
  EXPECT_EQ(Names(kube::kPods, ns), std::vector<std::string>{});
  const json quota = Get(kube::kResourceQuotas, ns, "septa-quota");
  EXPECT_EQ(quota["status"]["hard"].value("pods", ""), "0") << quota.dump();
  json late = immortal;
  late["metadata"]["name"] = "late";
  auto refused = host_->Create(kube::kPods, ns, late);
  ASSERT_FALSE(refused.ok()) << "a pod was admitted while the virtual cluster sleeps";
  EXPECT_EQ(refused.status().code(), Code::kPermissionDenied) << refused.status().ToString();

  ASSERT_NO_FATAL_FAILURE(Request("nap", &tenancy::RequestWake));
  ASSERT_TRUE(Eventually([&] { return IsReadyIn(store_, "nap"); })) << Describe("nap");
  EXPECT_NE(Get(kube::kResourceQuotas, ns, "septa-quota")["spec"]["hard"].value("pods", "unlimited"), "0");
  ASSERT_TRUE(host_->Create(kube::kPods, ns, late).ok()) << "awake, the namespace admits pods again";
}

TEST_F(reconcileProvisionerSleep, HostFaultsWhileStoppingWorkloadsSaySoAndItStillConverges) {
  SeedVCluster(store_, "nap", 0);
  ASSERT_NO_FATAL_FAILURE(StartProvisioner(store_));
  ASSERT_TRUE(Eventually([&] { return IsReadyIn(store_, "nap"); }));
  const std::string ns = tenancy::host::HostNamespaceName("ann", "nap");
  ASSERT_NO_FATAL_FAILURE(RunWorkloads(ns));
  // Deletes fail until the test has seen the False condition.
  failing_deletes_ = kFaultsUntilReleased;
  ASSERT_NO_FATAL_FAILURE(Request("nap", &tenancy::RequestSleep));
  ASSERT_TRUE(Eventually([&] {
    auto vc = Stored("nap");
    const tenancy::Condition* c = vc ? ConditionOf(*vc, "Sleeping") : nullptr;
    return c && c->status == ConditionStatus::kFalse && c->reason.starts_with("Host") &&
           c->message.starts_with("host workloads could not be deleted");
  }));
  EXPECT_EQ(Stored("nap")->state, VirtualClusterState::kSleeping);
  failing_deletes_ = 0;
  ASSERT_TRUE(Eventually([&] { return ConditionIs("nap", "Sleeping", ConditionStatus::kTrue, "WorkloadsStopped"); }));
  EXPECT_EQ(Names(kube::kPods, ns), std::vector<std::string>{});
}

// Tenant "ann" holds every GPU of the host in "hog".
void SeedHog(core::Store& store) {
  ASSERT_TRUE(store
                  .Transact(core::TxMode::kReadWrite,
                            [&](core::Tx& tx) -> Status {
                              tenancy::VirtualCluster vc;
                              vc.tenant = "ann";
                              vc.name = "hog";
                              vc.capacity.tier = gpu::Tier::kDedicated;
                              vc.capacity.count = 8;
                              SEPTA_RETURN_IF_ERROR(tx.VirtualClusters().Insert(vc));
                              tenancy::Reservation r;
                              r.tenant = "ann";
                              r.vcluster = "hog";
                              r.tier = gpu::Tier::kDedicated;
                              for (const char* node : {"a100-0", "a100-1"}) {
                                for (int g = 0; g < 4; ++g) r.gpus.push_back({node, g});
                              }
                              return tx.Reservations().Insert(r);
                            })
                  .ok());
}

TEST_F(reconcileProvisionerSleep, ReleasePolicyFreesTheReservationAndWakeReservesAgainAllOrNothing) {
  sleep_reservation_ = SleepReservation::kRelease;
  SeedVCluster(store_, "nap", 0);
  ASSERT_NO_FATAL_FAILURE(StartProvisioner(store_));
  ASSERT_TRUE(Eventually([&] { return IsReadyIn(store_, "nap"); }));
  const std::string ns = tenancy::host::HostNamespaceName("ann", "nap");
  ASSERT_NO_FATAL_FAILURE(RunWorkloads(ns));

  ASSERT_NO_FATAL_FAILURE(Request("nap", &tenancy::RequestSleep));
  ASSERT_TRUE(Eventually([&] {
    return ConditionIs("nap", "CapacityReady", ConditionStatus::kFalse, "ReleasedWhileSleeping") &&
           ConditionIs("nap", "Sleeping", ConditionStatus::kTrue, "WorkloadsStopped") &&
           !Get(kube::kNodes, "", "a100-0")["metadata"]["labels"].contains(tenancy::host::ReservedNodeLabel(ns));
  }));
  EXPECT_EQ(ReservationOf("nap"), std::nullopt);
  EXPECT_EQ(Names(kube::kPods, ns), std::vector<std::string>{});
  const json hard = Get(kube::kResourceQuotas, ns, "septa-quota")["spec"]["hard"];
  EXPECT_EQ(hard.value("requests.nvidia.com/gpu", hard.value("nvidia.com/gpu", "0")), "0") << hard.dump();
  EXPECT_TRUE(planes_.Has("ann", "nap"));

  // Someone takes every GPU: waking cannot place it, and says what is short.
  SeedHog(store_);
  ASSERT_NO_FATAL_FAILURE(Request("nap", &tenancy::RequestWake));
  ASSERT_TRUE(Eventually([&] {
    return ConditionIs("nap", "CapacityReady", ConditionStatus::kFalse, "InsufficientCapacity");
  })) << Describe("nap");
  auto waking = *Stored("nap");
  EXPECT_EQ(waking.state, VirtualClusterState::kProvisioning);
  EXPECT_NE(ConditionOf(waking, "CapacityReady")->message.find("reserved again"), std::string::npos);
  EXPECT_EQ(ReservationOf("nap"), std::nullopt) << "never half-written";

  // The hog goes: the retry (with backoff) places it and it turns READY.
  ASSERT_TRUE(store_
                  .Transact(core::TxMode::kReadWrite,
                            [](core::Tx& tx) -> Status {
                              SEPTA_RETURN_IF_ERROR(tx.Reservations().Delete("ann", "hog"));
                              auto hog = tx.VirtualClusters().Get("ann", "hog");
                              SEPTA_RETURN_IF_ERROR(hog);
                              return tx.VirtualClusters().Delete("ann", "hog", hog->version);
                            })
                  .ok());
  ASSERT_TRUE(Eventually([&] { return IsReadyIn(store_, "nap"); })) << Describe("nap");
  auto reserved = ReservationOf("nap");
  ASSERT_TRUE(reserved);
  EXPECT_EQ(reserved->gpus.size(), 1u);
  EXPECT_EQ(ConditionOf(*Stored("nap"), "CapacityReady")->status, ConditionStatus::kTrue);
  const json regrown = Get(kube::kResourceQuotas, ns, "septa-quota")["spec"]["hard"];
  EXPECT_EQ(regrown.value("requests.nvidia.com/gpu", regrown.value("nvidia.com/gpu", "")), "1") << regrown.dump();
}

// Issue 28 L1: suspending the tenant sleeps its virtual clusters whatever
// their own state, which stays as the tenant left it: host workloads are
// deleted, Sleeping is True with reason TenantSuspended, the reservation is
// kept (policy keep) or released (release), also when the provisioner was
// down as it was suspended; resuming brings it back to READY, placed again,
// and new workloads run.
class reconcileProvisionerSuspend : public reconcileProvisionerSleep,
                                    public ::testing::WithParamInterface<SleepReservation> {};

TEST_P(reconcileProvisionerSuspend, ASuspendedTenantsWorkloadsStopUntilItIsActiveAgain) {
  sleep_reservation_ = GetParam();
  const bool release = GetParam() == SleepReservation::kRelease;
  SeedVCluster(store_, "nap", 0);
  ASSERT_NO_FATAL_FAILURE(StartProvisioner(store_));
  ASSERT_TRUE(Eventually([&] { return IsReadyIn(store_, "nap"); }));
  const std::string ns = tenancy::host::HostNamespaceName("ann", "nap");
  ASSERT_NO_FATAL_FAILURE(RunWorkloads(ns));
  const auto septa_objects = HostObjectsOf("ann", "nap");
  const auto reservation = ReservationOf("nap");
  ASSERT_TRUE(reservation);

  // Suspended while no provisioner runs (septad killed as the PATCH
  // committed, its NOTIFY lost): the restarted one converges from the rows.
  provisioner_.reset();
  ASSERT_NO_FATAL_FAILURE(SetTenantState(core::TenantState::kSuspended, "nap"));
  ASSERT_NO_FATAL_FAILURE(StartProvisioner(store_));
  ASSERT_TRUE(Eventually([&] {
    return ConditionIs("nap", "Sleeping", ConditionStatus::kTrue, "TenantSuspended") &&
           (!release || ConditionIs("nap", "CapacityReady", ConditionStatus::kFalse, "ReleasedWhileSleeping"));
  })) << Describe("nap");
  EXPECT_EQ(Stored("nap")->state, VirtualClusterState::kReady) << "the virtual cluster's own state is kept";
  EXPECT_EQ(Names(kube::kPods, ns), std::vector<std::string>{});
  EXPECT_EQ(Names(kube::kDeployments, ns), std::vector<std::string>{});
  EXPECT_TRUE(planes_.Has("ann", "nap"));
  if (release) {
    EXPECT_EQ(ReservationOf("nap"), std::nullopt);
  } else {
    EXPECT_EQ(ReservationOf("nap"), reservation);
    EXPECT_EQ(HostObjectsOf("ann", "nap"), septa_objects);
  }
  // Nothing starts behind Septa's back: the suspended tenant's namespace is
  // fenced as a sleeping one's (its quota admits no pod).
  const json pod_spec = {{"containers", json::array({json{{"name", "c"}, {"image", "busybox"}}})}};
  auto refused = host_->Create(
      kube::kPods, ns,
      {{"apiVersion", "v1"}, {"kind", "Pod"}, {"metadata", {{"name", "late"}, {"namespace", ns}}}, {"spec", pod_spec}});
  EXPECT_EQ(refused.status().code(), Code::kPermissionDenied) << "a pod was admitted while the tenant is suspended";

  ASSERT_NO_FATAL_FAILURE(SetTenantState(core::TenantState::kActive, "nap"));
  ASSERT_TRUE(Eventually([&] {
    auto vc = Stored("nap");
    const tenancy::Condition* capacity = vc ? ConditionOf(*vc, "CapacityReady") : nullptr;
    return IsReadyIn(store_, "nap") && ConditionIs("nap", "Sleeping", ConditionStatus::kFalse, "Awake") && capacity &&
           capacity->status == ConditionStatus::kTrue;
  })) << Describe("nap");
  auto placed = ReservationOf("nap");
  ASSERT_TRUE(placed);
  EXPECT_EQ(placed->gpus.size(), reservation->gpus.size());
  ASSERT_NO_FATAL_FAILURE(RunWorkloads(ns));
  provisioner_->Enqueue({"ann", "nap"});
  ASSERT_TRUE(provisioner_->AwaitIdle(10s));
  EXPECT_EQ(Names(kube::kPods, ns).size(), 3u);
}

INSTANTIATE_TEST_SUITE_P(BothPolicies, reconcileProvisionerSuspend,
                         ::testing::Values(SleepReservation::kKeep, SleepReservation::kRelease),
                         [](const auto& info) { return info.param == SleepReservation::kKeep ? "keep" : "release"; });

}  // namespace
}  // namespace septa::reconcile
