// The virtual clusters whose pods this replica syncs, each with a
// Kubernetes client on its own API (core::ControlPlanes::SyncerKubeconfig)
// and informers in every namespace on its pods, which enqueue its PodKey
// (syncer_keys.h; and, when a pod goes, the keys of the objects it
// referenced; when it is bound to a node or goes from one, NodesKey) once
// their first list is loaded: that list's pods are the
// syncer's first sweep's. And informers on its config maps, secrets, services, endpoints
// and claims, which enqueue ObjectKey. Those start only when first needed
// (a pod uses one, the cluster has a pod, or a copy is on the host): each
// watch costs about 400 KiB, and most virtual clusters would keep them idle. The syncer starts a watch when a
// virtual cluster it holds the shard of is READY and stops it when the
// virtual cluster is deleted or sleeps, or the shard is lost.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "common/status.h"
#include "services/core/control_plane.h"
#include "services/kube/client.h"
#include "services/kube/watch.h"
#include "services/syncer/synced_cluster.h"
#include "services/syncer/syncer_keys.h"
#include "tenancy/sync/pod_references.h"

namespace septa::syncer {

// A host informer reached through the SyncerController that owns it: the
// parts it is handed to are made before it starts the informer.
using HostInformerRef = std::function<const kube::Informer&()>;

// One watched virtual cluster.
class WatchedCluster {
 public:
  // `start_objects` makes (and starts) the informer of `resource` on `client`.
  using ObjectInformerFactory =
      std::function<std::unique_ptr<kube::Informer>(kube::Client& client, const kube::Resource& resource)>;
  WatchedCluster(std::string tenant, std::string vcluster, std::unique_ptr<kube::Client> client,
                 std::optional<core::WorkloadEndpoints> endpoints, ObjectInformerFactory start_objects,
                 std::chrono::milliseconds start_timeout);
  ~WatchedCluster();  // stops the informers before the client goes

  const VirtualClusterRef& ref() const { return ref_; }
  const std::string& tenant() const { return ref_.tenant; }
  const std::string& vcluster() const { return ref_.vcluster; }
  kube::Client& client() { return *client_; }
  // Where its pods reach its API server and DNS when it has its own
  // (core::ControlPlanes::WorkloadEndpointsOf); nullopt: the syncer's settings.
  const std::optional<core::WorkloadEndpoints>& endpoints() const { return endpoints_; }
  kube::Informer& pods() { return *pods_; }
  // The informer on its config maps, secrets or services, started by the
  // first call (its first list within the watch's start timeout).
  Result<kube::Informer*> Objects(const kube::Resource& resource);
  Result<kube::Informer*> Objects(tenancy::sync::CopiedKind kind) { return Objects(ResourceOf(kind)); }
  // Whether that informer has been started.
  bool WatchesObjects(const kube::Resource& resource) const;

  SyncedCluster synced() const;
  // What the store says now.
  void Update(const SyncedCluster& synced);

  // Placement is serialized per virtual cluster: the mutex is held from
  // reading the assignments to creating the host pod, and pods created but
  // not yet in the host informer's cache are counted here, so that two
  // workers never hand out one slot. It also orders the copies of config
  // maps, secrets and claims (ObjectCopier, ClaimSyncer) with the pod
  // creates that need them: a copy is never deleted as unused while a pod
  // that uses it is created, and which pods have their host pods
  // (UsedByAnotherNamespace) does not change while a copy is decided.
  std::mutex& placement_mu() { return placement_mu_; }
  std::map<std::string, tenancy::sync::PodAssignment>& placed_not_cached() { return placed_not_cached_; }

  // Pods refused for want of capacity: looked at again when one of the
  // virtual cluster's host pods goes. Says whether that changed.
  bool Refused(const PodKey& key, bool refused);
  std::vector<PodKey> refused() const;
  bool IsRefused(const PodKey& key) const;

  // Keys of virtual namespace `ns` whose host name, of `resource`, is
  // another namespace's virtual object's copy (tenancy/sync/name_collisions.h),
  // or a host name a pod of another namespace uses: looked at again
  // (TakeWaiting) once a key of that host name of another namespace (the
  // holder's) finds nothing there, or once that pod goes (its informer
  // calls TakeUsersWaiting).
  enum class WaitingFor { kHolder, kUser };
  void Wait(WaitingFor what, const std::string& resource, const std::string& host_name, const std::string& ns,
            const SyncerKey& key);
  std::vector<SyncerKey> TakeWaiting(const std::string& resource, const std::string& host_name, const std::string& ns);
  // The keys waiting for the host names virtual pod `pod` used, as it goes.
  std::vector<SyncerKey> TakeUsersWaiting(const nlohmann::json& pod);

 private:
  friend class VirtualClusterWatches;
  void StopInformers();
  const VirtualClusterRef ref_;
  std::unique_ptr<kube::Client> client_;
  const std::optional<core::WorkloadEndpoints> endpoints_;
  std::unique_ptr<kube::Informer> pods_;
  std::atomic<bool> pods_listed_{false};  // the pods informer's first list is loaded
  const ObjectInformerFactory start_objects_;
  const std::chrono::milliseconds start_timeout_;
  mutable std::mutex objects_mu_;                                   // objects_, stopped_
  std::map<std::string, std::unique_ptr<kube::Informer>> objects_;  // by resource name
  bool stopped_ = false;
  mutable std::mutex mu_;  // synced_, refused_, waiting_
  SyncedCluster synced_;
  std::set<PodKey> refused_;
  // By what, and (resource, host name): key -> its namespace.
  using Waiting = std::map<std::pair<std::string, std::string>, std::map<SyncerKey, std::string>>;
  std::map<WaitingFor, Waiting> waiting_;
  std::vector<SyncerKey> Take(WaitingFor what, const std::string& resource, const std::string& host_name,
                              const std::string& ns);  // mu_ held
  std::mutex placement_mu_;
  std::map<std::string, tenancy::sync::PodAssignment> placed_not_cached_;  // by host pod name
};

class VirtualClusterWatches {
 public:
  // `enqueue` is called with pod keys from the informers' threads.
  VirtualClusterWatches(core::ControlPlanes& planes, kube::ClientOptions client_options, EnqueueKey enqueue);
  ~VirtualClusterWatches();  // StopAll

  // The watch of `synced`'s virtual cluster, updated to `synced`, or started
  // (its first list loaded within `timeout`) if there was none.
  Result<std::shared_ptr<WatchedCluster>> Watch(const SyncedCluster& synced, std::chrono::milliseconds timeout);
  void Unwatch(const VirtualClusterRef& cluster);
  std::shared_ptr<WatchedCluster> Find(const VirtualClusterRef& cluster) const;
  std::vector<VirtualClusterRef> Watched() const;
  void StopAll();

 private:
  core::ControlPlanes& planes_;
  const kube::ClientOptions client_options_;
  const EnqueueKey enqueue_;
  mutable std::mutex mu_;
  std::map<VirtualClusterRef, std::shared_ptr<WatchedCluster>> watched_;
};

}  // namespace septa::syncer
