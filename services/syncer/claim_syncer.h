// A virtual cluster's PersistentVolumeClaims on the host
// (tenancy/sync/host_claims.h): each virtual claim copied to its host
// namespace once the virtual cluster's claims are watched, its status
// (Bound, capacity) copied up, its request grown with the virtual one's,
// its copy deleted when the virtual claim is deleted. A copy holds the
// tenant's data, so it is never deleted for want of a pod, and a copy of an
// earlier claim of the same name is deleted before the new one is made.
// A claim that may not be synced (a named or selected host volume, a
// snapshot source) gets a SyncRefused event and no copy; so does one whose
// host name is another virtual object's (tenancy/sync/name_collisions.h:
// that copy, another namespace's data, is never touched), until that one
// is gone.
//
// The virtual cluster's claims are watched from its first pod that uses
// one (or a copy on the host); until then a claim waits in the virtual
// cluster, as with a WaitForFirstConsumer storage class. Level-based: the
// syncer calls Reconcile for keys ObjectKey{..., ObjectKind::kClaim, ...} (syncer_keys.h).
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "services/kube/client.h"
#include "services/kube/watch.h"
#include "services/reconcile/controller.h"
#include "services/syncer/host_copies.h"
#include "services/syncer/virtual_cluster_watches.h"
#include "tenancy/sync/pod_translation.h"

namespace septa::syncer {

class ClaimSyncer {
 public:
  // `enqueue` is called with claim keys from the host informer's thread.
  // `host_pods` tells which pods have their host pods (UsedByAnotherNamespace).
  ClaimSyncer(kube::Client& host, EnqueueKey enqueue, HostInformerRef host_pods);
  ~ClaimSyncer();  // Stop

  // Starts the host informer on claims (selector septa.dev/synced=true),
  // its first list within `timeout`.
  Status Start(std::chrono::milliseconds timeout);
  void Stop();

  // One virtual claim (starts the virtual cluster's claim watch). Takes the
  // cluster's placement lock: whether it is copied is decided in order with
  // the pods' admissions (which read the claims' host names).
  reconcile::Outcome Reconcile(WatchedCluster& cluster, const std::string& ns, const std::string& name);

  // Why virtual pod `virtual_pod` (key `pod_key`) may not run for the
  // claims it uses: one has the host name of another virtual object's copy
  // or of a claim a pod of another namespace uses, which its host pod
  // would mount (the pod's key is looked at again once that host name is
  // free), or an ephemeral volume's claim is another pod's
  // (tenancy::sync::EphemeralClaimOfAnother); nullopt when none. Called
  // with the cluster's placement lock held.
  Result<std::optional<tenancy::sync::Refusal>> ClaimsRefusal(WatchedCluster& cluster,
                                                              const nlohmann::json& virtual_pod,
                                                              const PodKey& pod_key) const;

  // The keys of the virtual claims whose copies are in `host_namespace`
  // (the host informer's cache) for this virtual cluster.
  std::vector<ObjectKey> ClaimKeys(const std::string& host_namespace, const VirtualClusterRef& cluster) const;

 private:
  void OnHostClaim(const nlohmann::json& host_claim);

  kube::Client& host_;
  const EnqueueKey enqueue_;
  const HostInformerRef host_pods_;
  std::unique_ptr<kube::Informer> host_claims_;
};

}  // namespace septa::syncer
