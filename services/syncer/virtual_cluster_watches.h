// The virtual clusters whose pods this replica syncs, each with a
// Kubernetes client on its own API (core::ControlPlanes::SyncerKubeconfig)
// and informers in every namespace on its pods, which enqueue
// "<tenant>/<vcluster>/<namespace>/<name>" (and, when a pod goes, the keys
// of the objects it referenced; when it is bound to a node or goes from
// one, NodesKey) once their first list is loaded: that list's pods are the
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
#include "tenancy/sync/pod_references.h"

namespace septa::syncer {

// A host informer reached through the SyncerController that owns it: the
// parts it is handed to are made before it starts the informer.
using HostInformerRef = std::function<const kube::Informer&()>;

// The pod key of a virtual pod.
std::string PodKey(const std::string& tenant, const std::string& vcluster, const std::string& ns,
                   const std::string& name);

// The key of a virtual cluster's nodes: "<tenant>/<vcluster>/nodes"
// (SyncVirtualNodes), enqueued when one of its pods is bound to a node or
// goes from one.
std::string NodesKey(const std::string& tenant, const std::string& vcluster);

// The key of a virtual cluster's gangs' PodGroups:
// "<tenant>/<vcluster>/podgroups" (SyncerController::CollectPodGroups),
// enqueued when a gang member's host pod goes and at every resync.
inline constexpr std::string_view kPodGroupsKeyPart = "podgroups";
std::string PodGroupsKey(const std::string& tenant, const std::string& vcluster);

// The key of a virtual config map, secret or service:
// "<tenant>/<vcluster>/<configmaps|secrets|services>/<namespace>/<name>".
std::string ObjectKey(const std::string& tenant, const std::string& vcluster, const kube::Resource& resource,
                      const std::string& ns, const std::string& name);
std::string ObjectKey(const std::string& tenant, const std::string& vcluster, tenancy::sync::CopiedKind kind,
                      const std::string& ns, const std::string& name);
// The keys of the config maps and secrets a virtual pod uses (tenancy::sync::ReferencedObjects).
std::vector<std::string> ReferencedObjectKeys(const std::string& tenant, const std::string& vcluster,
                                              const nlohmann::json& virtual_pod);
// The key of a virtual pod's service account token secret (TokenSecrets):
// "<tenant>/<vcluster>/tokens/<namespace>/<virtual pod UID>".
std::string TokenKey(const std::string& tenant, const std::string& vcluster, const std::string& ns,
                     const std::string& uid);
// The resource of a copied kind (kube::kConfigMaps, kube::kSecrets).
const kube::Resource& ResourceOf(tenancy::sync::CopiedKind kind);

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

  const std::string& tenant() const { return tenant_; }
  const std::string& vcluster() const { return vcluster_; }
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
  bool Refused(const std::string& key, bool refused);
  std::vector<std::string> refused() const;
  bool IsRefused(const std::string& key) const;

  // Keys of virtual namespace `ns` whose host name, of `resource`, is
  // another namespace's virtual object's copy (tenancy/sync/name_collisions.h),
  // or a host name a pod of another namespace uses: looked at again
  // (TakeWaiting) once a key of that host name of another namespace (the
  // holder's) finds nothing there, or once that pod goes (its informer
  // calls TakeUsersWaiting).
  enum class WaitingFor { kHolder, kUser };
  void Wait(WaitingFor what, const std::string& resource, const std::string& host_name, const std::string& ns,
            const std::string& key);
  std::vector<std::string> TakeWaiting(const std::string& resource, const std::string& host_name,
                                       const std::string& ns);
  // The keys waiting for the host names virtual pod `pod` used, as it goes.
  std::vector<std::string> TakeUsersWaiting(const nlohmann::json& pod);

 private:
  friend class VirtualClusterWatches;
  void StopInformers();
  const std::string tenant_;
  const std::string vcluster_;
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
  std::set<std::string> refused_;
  // By what, and (resource, host name): key -> its namespace.
  using Waiting = std::map<std::pair<std::string, std::string>, std::map<std::string, std::string>>;
  std::map<WaitingFor, Waiting> waiting_;
  std::vector<std::string> Take(WaitingFor what, const std::string& resource, const std::string& host_name,
                                const std::string& ns);  // mu_ held
  std::mutex placement_mu_;
  std::map<std::string, tenancy::sync::PodAssignment> placed_not_cached_;  // by host pod name
};

class VirtualClusterWatches {
 public:
  // `enqueue` is called with pod keys from the informers' threads.
  VirtualClusterWatches(core::ControlPlanes& planes, kube::ClientOptions client_options,
                        std::function<void(const std::string& key)> enqueue);
  ~VirtualClusterWatches();  // StopAll

  // The watch of `synced`'s virtual cluster, updated to `synced`, or started
  // (its first list loaded within `timeout`) if there was none.
  Result<std::shared_ptr<WatchedCluster>> Watch(const SyncedCluster& synced, std::chrono::milliseconds timeout);
  void Unwatch(const std::string& tenant, const std::string& vcluster);
  std::shared_ptr<WatchedCluster> Find(const std::string& tenant, const std::string& vcluster) const;
  std::vector<std::pair<std::string, std::string>> Watched() const;
  void StopAll();

 private:
  core::ControlPlanes& planes_;
  const kube::ClientOptions client_options_;
  const std::function<void(const std::string&)> enqueue_;
  mutable std::mutex mu_;
  std::map<std::pair<std::string, std::string>, std::shared_ptr<WatchedCluster>> watched_;
};

}  // namespace septa::syncer
