// The provisioner: makes each virtual cluster real on the host cluster and
// keeps it so (docs/ARCHITECTURE.md "The provisioner"). Keys are
// tenancy::VirtualClusterRef ("<tenant>/<vcluster>"). Triggers: NOTIFY on
// virtual cluster changes (septad wires store::NotificationListener to
// EnqueuePayload), one informer per managed
// host kind (label app.kubernetes.io/managed-by=septa; an object leads back
// to its virtual cluster by its labels) so drift is repaired, and a periodic
// Resync that also lists what is on the host and in ControlPlanes, so that
// objects whose virtual cluster no longer exists (a crash between deleting
// them and deleting the row) are found.
//
// Reconcile(key), level-based and idempotent:
//  - no row: delete every host object labelled for the key, its node
//    patches and its control plane (orphans);
//  - DELETING: the same, then, once the host shows none of it, release the
//    reservation and delete the row in one transaction (audited);
//  - otherwise: record host_namespace first (so a delete racing the first
//    apply knows there is something to remove), apply every rendered object
//    that the host does not already show (server-side apply, Septa's field
//    manager, force), patch the reserved nodes, Ensure the control plane,
//    and write the conditions NamespaceReady (namespace, network policies,
//    RBAC, node patches), QuotaReady (ResourceQuota, LimitRange), QueueReady
//    (scheduler queues; reason NotConfigured with scheduler `default`),
//    ControlPlaneReady and Drifted (True, reason HostObjectRestored, when an
//    object of a converged generation had to be written again; False, reason
//    NoDrift, once a pass finds every object as rendered); the state turns
//    READY when every one and CapacityReady is True;
//  - SLEEPING: the same (Septa's host objects and the control plane with
//    its objects stay), and the tenant's host workloads are deleted
//    (host_workloads.h); condition Sleeping turns True once none is left,
//    and with sleep_reservation `release` the reservation is then freed
//    (rendered again without it: no GPU quota, reserved nodes let go);
//  - woken (PROVISIONING again) without a reservation: it is placed again
//    first (Reserve), then provisioned as above.
// Host errors become a condition False with the error, and a retry with
// backoff. The row is written only when something changed, with the version
// read in the same transaction, so a concurrent user update is never lost.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <stop_token>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "common/clock.h"
#include "services/core/capacity_ledger.h"
#include "services/core/control_plane.h"
#include "services/core/store.h"
#include "services/kube/client.h"
#include "services/kube/watch.h"
#include "services/reconcile/controller.h"
#include "tenancy/host/config.h"
#include "tenancy/host/render.h"
#include "tenancy/virtual_cluster_ref.h"

namespace septa::reconcile {

// What a sleeping virtual cluster does with its reservation: keep it (the
// capacity waits for it), or release it at sleep and place it again on wake
// (septad config `sleep_reservation`).
enum class SleepReservation { kKeep, kRelease };

struct ProvisionerControllerOptions {
  int workers = 4;
  tenancy::host::RenderConfig render{};
  // How often everything is listed again (orphans, lost triggers), and the
  // informers' resync.
  std::chrono::milliseconds resync_interval{std::chrono::minutes(1)};
  // How soon to look again while waiting for the host (a namespace being
  // deleted, a control plane starting).
  std::chrono::milliseconds poll_interval{std::chrono::milliseconds(500)};
  ShardLeases* shards = nullptr;  // as ControllerOptions::shards
  SleepReservation sleep_reservation = SleepReservation::kKeep;
  // Places a released reservation again when its virtual cluster wakes;
  // nullptr: a virtual cluster without one stays unrendered (RenderFailed).
  core::CapacityLedger* ledger = nullptr;
};

class ProvisionerController final : public Reconciler<tenancy::VirtualClusterRef> {
 public:
  // `control_planes`: where virtual control planes come from (septad: the
  // simulated ones); nullptr leaves ControlPlaneReady False (reason
  // NoControlPlane) and the state PROVISIONING.
  ProvisionerController(ProvisionerControllerOptions options, core::Store& store, kube::Client& host,
                        core::ControlPlanes* control_planes, const Clock& clock, prometheus::Registry& metrics);
  ~ProvisionerController() override;  // Stop

  // Starts the informers, waits (at most `timeout`) for their first lists,
  // then the controller and the periodic resync. Informers of kinds the
  // host does not serve yet keep retrying and do not hold the start.
  Status Start(std::chrono::milliseconds timeout);
  void Stop();
  void Enqueue(const tenancy::VirtualClusterRef& key) { controller_.Enqueue(key); }
  // A NOTIFY payload "<tenant>/<vcluster>": that virtual cluster; one that
  // names none ("" after a reconnect, or malformed) resyncs.
  void EnqueuePayload(std::string_view payload) {
    if (auto key = DecodeKey<tenancy::VirtualClusterRef>(payload)) {
      Enqueue(*key);
    } else {
      Resync();
    }
  }
  void Resync() { controller_.Resync(); }
  bool AwaitIdle(std::chrono::milliseconds timeout) const { return controller_.AwaitIdle(timeout); }

  Outcome Reconcile(const tenancy::VirtualClusterRef& key) override;

 private:
  struct Desired;
  struct Applied;
  Result<std::vector<tenancy::VirtualClusterRef>> ListKeys();
  Outcome Provision(const Desired& desired);
  // `host_namespace`: the row's, "" when there is none.
  Outcome Teardown(const std::string& tenant, const std::string& vcluster, const std::string& host_namespace,
                   bool release);
  Result<bool> ApplyObject(const nlohmann::json& object, bool& wrote);
  Status PatchNodes(const tenancy::host::HostObjects& rendered, bool& wrote);
  // True once nothing of the virtual cluster is left on the host.
  Result<bool> RemoveHostObjects(const std::string& tenant, const std::string& vcluster,
                                 const std::string& host_namespace);
  Status WriteStatus(const Desired& desired, const Applied& applied);
  // Sleep and wake (a SLEEPING row, or one woken without a reservation).
  // The Sleeping condition: host workloads deleted, or still going.
  tenancy::Condition SleepCondition(const Desired& desired, const std::string& host_namespace, bool& waiting,
                                    Status& error);
  // sleep_reservation release: frees the reservation rows of a sleeping
  // virtual cluster whose workloads are gone (CapacityReady False).
  Status ReleaseWhileAsleep(const Desired& desired);
  // Places the capacity of an awake virtual cluster that holds none, all or
  // nothing through the ledger; a shortfall leaves CapacityReady False
  // naming it and is retried with backoff.
  Outcome Reserve(const Desired& desired);
  std::optional<nlohmann::json> Cached(const kube::Resource& resource, const std::string& ns,
                                       const std::string& name) const;
  void RunResyncs(std::stop_token stop);

  const ProvisionerControllerOptions options_;
  core::Store& store_;
  kube::Client& host_;
  core::ControlPlanes* const control_planes_;
  const Clock& clock_;
  Controller<tenancy::VirtualClusterRef> controller_;
  std::vector<std::pair<kube::Resource, std::unique_ptr<kube::Informer>>> informers_;
  std::atomic<bool> informers_listed_{false};  // Start waited for the informers: their events are triggers
  std::jthread resyncs_;
};

}  // namespace septa::reconcile
