// The syncer: one per septad, for every virtual cluster whose provisioner
// shard this replica holds. It copies each virtual cluster's pods down to
// its host namespace (tenancy/sync: names, bookkeeping, tier patches,
// placement inside the reservation), copies the host pods' status, node
// and events up, shows the nodes its pods run on with what the tenant
// holds there as capacity, and carries deletions both ways
// (../shared/docs/SYNCER-FACTS.md "Status and deletion").
// docs/ARCHITECTURE.md "The syncer" has the table.
//
// Keys, on the reconcile runtime: SyncerKey (syncer_keys.h), one struct
// per kind of work routed by type: ClusterKey (start, refresh or stop the
// virtual cluster's watch; enqueue its pods, objects and events), PodKey
// (one virtual pod), ObjectKey (one config map or secret, ObjectCopier; one
// service or its endpoints, ServiceSyncer, whose watch starts once the
// virtual cluster has a pod or a service copy is on the host; one claim,
// ClaimSyncer, watched once a pod uses one or a copy is on the host),
// EventKey (one host event about one of its pods, EventCopier), TokenKey
// (the token secret of one virtual pod, collected when the pod is gone;
// TokenSecrets), NodesKey (the nodes it shows, SyncVirtualNodes) and
// PodGroupsKey (its gangs' PodGroups), all sharded on their virtual
// cluster's "<tenant>/<vcluster>" under the provisioner's
// ShardLeases. Triggers: VirtualClusterChanged (septad's NOTIFY
// septa_vclusters), each watched virtual cluster's informers, one host
// informer per kind (selector septa.dev/synced=true; events:
// involvedObject.kind=Pod) whose objects map back through VirtualRefOf,
// and a periodic resync (every 10 minutes); the watches of shards no
// longer held are dropped every minute.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <string_view>
#include <thread>

#include "common/clock.h"
#include "services/core/control_plane.h"
#include "services/core/store.h"
#include "services/kube/client.h"
#include "services/kube/watch.h"
#include "services/reconcile/controller.h"
#include "services/syncer/claim_syncer.h"
#include "services/syncer/event_copier.h"
#include "services/syncer/object_copier.h"
#include "services/syncer/pod_groups.h"
#include "services/syncer/service_syncer.h"
#include "services/syncer/syncer_keys.h"
#include "services/syncer/token_secrets.h"
#include "services/syncer/virtual_cluster_watches.h"
#include "tenancy/host/config.h"
#include "tenancy/sync/name_collisions.h"
#include "tenancy/sync/pod_translation.h"

namespace prometheus {
class Histogram;
class Registry;
}  // namespace prometheus

namespace septa::syncer {

struct SyncerOptions {
  tenancy::sync::SyncSettings settings{};
  tenancy::host::RenderConfig render{};  // the provisioner's: PSA levels by tier
  int workers = 4;
  reconcile::ShardLeases* shards = nullptr;  // the provisioner's; nullptr: every virtual cluster
  // The sweep over every key of every virtual cluster, a safety net under
  // the events: at 1,000 virtual clusters of 10 pods one is 23,000
  // reconciles and 4.8 CPU-seconds (docs/BENCHMARKS.md), 8 % of a core
  // if it ran every minute. It is the only one: the syncer's informers,
  // host and virtual, have no resync period, which would queue their
  // every object's key again at normal priority, ahead of new events (and
  // cost a thread per informer, two per virtual cluster).
  std::chrono::milliseconds resync_interval{10 * 60'000};
  // How often the watches of shards no longer held are dropped.
  std::chrono::milliseconds shard_check_interval{60'000};
  // For the clients of the virtual APIs.
  kube::ClientOptions virtual_client{};
  // How long starting one virtual cluster's watch may wait for its first list.
  std::chrono::milliseconds watch_start_timeout{10'000};
};

class SyncerController final : public reconcile::Reconciler<SyncerKey> {
 public:
  SyncerController(SyncerOptions options, core::Store& store, kube::Client& host, core::ControlPlanes& planes,
                   const Clock& clock, prometheus::Registry& metrics);
  ~SyncerController() override;  // Stop

  // Starts the host informer (its first list within `timeout`), the workers
  // and the periodic resync.
  Status Start(std::chrono::milliseconds timeout);
  void Stop();

  // A virtual cluster's row changed.
  void VirtualClusterChanged(const VirtualClusterRef& cluster) { controller_.Enqueue(ClusterKey{cluster}); }
  // The same from a NOTIFY payload "<tenant>/<vcluster>"; one that names
  // none ("", malformed) resyncs.
  void VirtualClusterChanged(std::string_view payload);
  // Notices may have been lost: everything is listed again.
  void Resync() { controller_.Resync(); }
  bool AwaitIdle(std::chrono::milliseconds timeout) const { return controller_.AwaitIdle(timeout); }
  const VirtualClusterWatches& watches() const { return watches_; }

  // Routes `key` by its type to the part that reconciles it.
  reconcile::Outcome Reconcile(const SyncerKey& key) override;

 private:
  Result<std::vector<SyncerKey>> ListKeys();
  void RunResyncs(std::stop_token stop);
  // One per key type (std::visit); every one but the cluster's does nothing
  // for a virtual cluster not watched (not READY, or another replica's).
  reconcile::Outcome ReconcileKey(const ClusterKey& key);
  reconcile::Outcome ReconcileKey(const PodKey& key);
  reconcile::Outcome ReconcileKey(const ObjectKey& key);
  reconcile::Outcome ReconcileKey(const EventKey& key);
  reconcile::Outcome ReconcileKey(const TokenKey& key);
  reconcile::Outcome ReconcileKey(const NodesKey& key);
  reconcile::Outcome ReconcileKey(const PodGroupsKey& key);
  reconcile::Outcome CreateHostPod(WatchedCluster& cluster, const PodKey& key, const nlohmann::json& virtual_pod);
  reconcile::Outcome Refuse(WatchedCluster& cluster, const PodKey& key, const nlohmann::json& virtual_pod,
                            const tenancy::sync::Refusal& refusal);
  // The pod's host name is `holder`'s host pod (tenancy/sync/name_collisions.h).
  reconcile::Outcome HostNameTaken(WatchedCluster& cluster, const PodKey& key, const nlohmann::json& virtual_pod,
                                   const std::string& host_name, const tenancy::sync::HostNameHolder& holder);
  reconcile::Outcome SyncUp(WatchedCluster& cluster, const nlohmann::json& virtual_pod, const nlohmann::json& host_pod);
  reconcile::Outcome DeleteVirtualPod(WatchedCluster& cluster, const nlohmann::json& virtual_pod);
  // Deletes the PodGroups of the virtual cluster's gangs that no virtual or host pod names any more.
  reconcile::Outcome CollectPodGroups(WatchedCluster& cluster);
  // The pod IPs of the virtual cluster's host pods, with their names (ServiceSyncer's endpoints).
  std::map<std::string, std::string> HostPodIps(const tenancy::sync::VirtualClusterView& view) const;
  // The host pods of a virtual cluster in the host informer's cache: those
  // of its host namespace (not a scan of every synced pod) that carry its labels.
  std::vector<nlohmann::json> HostPodsOf(const std::string& host_namespace, const std::string& tenant,
                                         const std::string& vcluster) const;
  void OnHostPod(const nlohmann::json& host_pod, bool deleted);
  // Queues a key a host informer's event asks for, if its virtual cluster
  // is watched (see OnHostPod).
  void EnqueueFromHost(const SyncerKey& key);

  const SyncerOptions options_;
  core::Store& store_;
  kube::Client& host_;
  const Clock& clock_;
  prometheus::Histogram* sync_latency_ = nullptr;
  VirtualClusterWatches watches_;
  reconcile::Controller<SyncerKey> controller_;
  std::unique_ptr<kube::Informer> host_pods_;
  ObjectCopier copies_;
  ServiceSyncer services_;
  ClaimSyncer claims_;
  EventCopier events_;
  TokenSecrets tokens_;
  PodGroups pod_groups_;
  std::jthread resyncs_;
};

}  // namespace septa::syncer
