// The config maps and secrets that a virtual cluster's synced pods use,
// copied to its host namespace (tenancy/sync/object_copies.h), kept equal to
// the virtual objects and deleted when these go or no pod of the virtual
// cluster uses them any more. Level-based, one path for both kinds: the
// syncer calls Reconcile for keys ObjectKey, and EnsureCopies before it
// creates a host pod, so the kubelet finds what the pod mounts.
//
// Which pods count: the virtual pods of the object's namespace, less those
// refused (they have no host pod). Secrets' values are never logged: what
// is logged and returned names objects only.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/status.h"
#include "services/kube/client.h"
#include "services/kube/watch.h"
#include "services/reconcile/controller.h"
#include "services/syncer/host_copies.h"
#include "services/syncer/virtual_cluster_watches.h"
#include "tenancy/sync/pod_references.h"
#include "tenancy/sync/pod_translation.h"

namespace septa::syncer {

// Whether the host (or the translation) refused a copy for what it is: a
// 400, 413 or 422 (INVALID_ARGUMENT), which no retry changes. Such a copy
// is not retried; its virtual object gets a SyncRefused event, and a pod
// that needs it is refused too.
inline bool RefusedByHost(const Status& status) { return status.code() == Code::kInvalidArgument; }

class ObjectCopier {
 public:
  // `enqueue` is called with object keys from the host informers' threads
  // (and, for the service account token secrets that share the secret
  // informer, their TokenKey and their pod's key). `host_pods` tells which
  // pods have their host pods (UsedByAnotherNamespace).
  ObjectCopier(kube::Client& host, EnqueueKey enqueue, HostInformerRef host_pods);
  ~ObjectCopier();  // Stop

  // Starts the host informers on config maps and secrets (selector
  // septa.dev/synced=true), their first lists within `timeout`.
  Status Start(std::chrono::milliseconds timeout);
  void Stop();

  // One virtual object: copied when a pod of its virtual cluster uses it
  // (written only when the host copy differs), its host copy deleted when
  // it is gone (confirmed by a live read) or unused; a copy of an earlier
  // object of that name is replaced. Its host name may be another virtual
  // object's (tenancy/sync/name_collisions.h): that copy is never written
  // over or deleted while that object is there, and this one is refused
  // with a SyncRefused event, looked at again once that copy is gone.
  // Takes the cluster's placement lock.
  reconcile::Outcome Reconcile(WatchedCluster& cluster, const tenancy::sync::ObjectRef& ref);

  // Before the host pod of virtual pod `pod_key` is created, with the
  // cluster's placement lock held: the copies of `refs` that exist in the
  // virtual cluster are on the host and current. One that is not there yet
  // is copied when it appears (its event), as a kubelet waits for a config
  // map that does not exist yet. Returns why the pod may not run when one
  // of them cannot be copied, or another virtual object's copy has its host
  // name (the pod would mount that); the pod's key is looked at again once
  // that host name is free.
  Result<std::optional<tenancy::sync::Refusal>> EnsureCopies(WatchedCluster& cluster,
                                                             const std::set<tenancy::sync::ObjectRef>& refs,
                                                             const PodKey& pod_key);

  // The keys of the virtual objects whose copies are in `host_namespace`
  // (the host informers' cache) for this virtual cluster.
  std::vector<ObjectKey> CopyKeys(const std::string& host_namespace, const VirtualClusterRef& cluster) const;

  // The informer on the host's synced secrets (after Start), which also
  // holds the service account token secrets (TokenSecrets).
  const kube::Informer& host_secrets() const { return *host_secrets_; }

 private:
  kube::Informer& host_copies(tenancy::sync::CopiedKind kind) const;
  // Whether a pod of `cluster` references `ref` (that is not refused, unless `refused_too`).
  static bool Referenced(WatchedCluster& cluster, const tenancy::sync::ObjectRef& ref, bool refused_too);
  // Why `ref` gets no copy at `host_name` (where `host_copy` is, if any):
  // another virtual object's copy is there, or a pod of another namespace
  // uses that host name (tenancy/sync/name_collisions.h); nullopt otherwise.
  std::optional<tenancy::sync::Refusal> HostNameRefusal(WatchedCluster& cluster, const tenancy::sync::ObjectRef& ref,
                                                        const std::string& host_name,
                                                        const std::optional<nlohmann::json>& host_copy) const;
  // The copy written or current, or why it may not be (its host name is another's).
  Result<std::optional<tenancy::sync::Refusal>> EnsureCopy(WatchedCluster& cluster, const tenancy::sync::ObjectRef& ref,
                                                           const nlohmann::json& virtual_object,
                                                           std::optional<nlohmann::json> host_copy);
  Status DeleteCopy(const tenancy::sync::ObjectRef& ref, const nlohmann::json& host_copy);
  void OnHostCopy(tenancy::sync::CopiedKind kind, const nlohmann::json& host_copy);

  kube::Client& host_;
  const EnqueueKey enqueue_;
  const HostInformerRef host_pods_;
  std::unique_ptr<kube::Informer> host_config_maps_;
  std::unique_ptr<kube::Informer> host_secrets_;
};

}  // namespace septa::syncer
