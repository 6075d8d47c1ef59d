// A virtual object's copy on the host, as every kind the syncer copies
// whole handles it: the key its events enqueue, the keys of a namespace's
// copies, and its deletion.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>

#include "common/status.h"
#include "services/kube/client.h"
#include "services/kube/watch.h"
#include "services/syncer/virtual_cluster_watches.h"
#include "tenancy/sync/name_collisions.h"

namespace septa::syncer {

// Deletes `host_copy` (of `resource`) with its UID as the precondition, so
// that an object made again under that name meanwhile is never deleted in
// its place; one already gone counts as deleted. Logged.
Status DeleteHostCopy(kube::Client& host, const kube::Resource& resource, const nlohmann::json& host_copy);

// The ObjectKey (of `resource`) of the virtual object `host_copy` records
// (its labels name the virtual cluster); nullopt when it records none.
std::optional<ObjectKey> KeyOfHostCopy(const nlohmann::json& host_copy, const kube::Resource& resource);

// Adds to `keys` the ObjectKey (of `resource`) of each virtual object of
// `cluster` whose copy `copies` holds in `host_namespace`.
void AddHostCopyKeys(std::set<ObjectKey>& keys, const kube::Informer& copies, const std::string& host_namespace,
                     const VirtualClusterRef& cluster, const kube::Resource& resource);

// Host names that two virtual objects map to (tenancy/sync/name_collisions.h),
// one path for every kind the syncer copies.

// Whether `holder`, the virtual object whose copy has a host name another
// maps to, is gone: its cache says so and a live read of the virtual API
// confirms it (then that copy is stale). A kind the syncer does not copy
// counts as there.
Result<bool> HolderGone(WatchedCluster& cluster, const tenancy::sync::HostNameHolder& holder);

// Queues, through `enqueue`, the keys waiting for `host_name` of `resource`
// (WatchedCluster::Wait): a key of that host name of namespace `ns` found
// nothing there.
void WakeWaiting(WatchedCluster& cluster, const kube::Resource& resource, const std::string& host_name,
                 const std::string& ns, const EnqueueKey& enqueue);

// Has `key` (of namespace `ns`) wait for `host_name` of `resource`, then
// looks at `copies` again: whether the host object is still there. When it
// is not, the look that wakes the waiting keys may have come first: the
// caller looks again.
bool WaitFor(WatchedCluster& cluster, const kube::Informer& copies, const std::string& host_name,
             const kube::Resource& resource, const std::string& ns, const SyncerKey& key);

// A pod of `cluster` of another namespace than `ns` that uses `host_name`
// for one of its `kind` objects (config maps, secrets, claims: the host pod
// of a pod refused does not exist), as the refusal of the `kind` object
// `ns`/`name` whose host name that is; nullopt when none does. Its copy
// would be mounted by that pod. First come, first served, by what runs and
// not by the order keys are looked at: once a pod of `ns` that uses
// `host_name` has its host pod (in `host_pods`, or created and not cached
// yet), only pods of other namespaces that have one count, so a newcomer
// never displaces it. Called with the cluster's placement lock held.
std::optional<tenancy::sync::Refusal> UsedByAnotherNamespace(WatchedCluster& cluster, const kube::Informer& host_pods,
                                                             std::string_view kind, const std::string& ns,
                                                             const std::string& name, const std::string& host_name);

}  // namespace septa::syncer
