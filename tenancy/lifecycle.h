// How a virtual cluster changes: which state transitions are legal, and how
// a PATCH with an update mask changes its desired state.
#pragma once

#include <string>
#include <vector>

#include "common/status.h"
#include "tenancy/virtual_cluster.h"

namespace septa::tenancy {

// The legal moves between states (a state may always stay as it is):
//   PROVISIONING → READY | FAILED | DELETING
//   READY        → PROVISIONING (a resize or re-layout under way) | SLEEPING | FAILED | DELETING
//   SLEEPING     → PROVISIONING (waking) | READY | FAILED | DELETING
//   FAILED       → PROVISIONING (retried or fixed) | READY | DELETING
//   DELETING     → nothing: it ends when the row is deleted, once its capacity is released.
bool CanTransition(VirtualClusterState from, VirtualClusterState to);
// FAILED_PRECONDITION naming "state" and both states when CanTransition is false.
Status CheckTransition(VirtualClusterState from, VirtualClusterState to);

// Whether a client may change the desired state (display name, capacity,
// quota, queue) of a virtual cluster in `state`: not once it is DELETING.
Status CheckUpdatable(VirtualClusterState state);

// `current` with the fields named by `paths` (an update mask, AIP-134) taken
// from `patch`. A path names a whole field (display_name, capacity, quota,
// queue, api_limits) or one member of quota, queue or api_limits
// ("quota.cpu_milli", "queue.priority", "api_limits.watches"; an absent
// api_limits member is the tier's default); capacity is replaced whole.
// Who may change api_limits (admins) is the caller's to check.
// `generation` is bumped when the desired state that
// reconcilers act on (capacity, quota, queue, api_limits) changes; version, etag and
// update_time are the caller's (it also validates the result, see
// tenancy/validation.h). INVALID_ARGUMENT naming the path for an immutable
// field (name, tenant) or an output field (state, conditions, reservation,
// host_namespace, endpoint, etag, generation, create_time, update_time);
// naming "update_mask" for an unknown path or an empty mask;
// FAILED_PRECONDITION when the virtual cluster is DELETING.
Result<VirtualCluster> ApplyVirtualClusterPatch(const VirtualCluster& current, const VirtualCluster& patch,
                                                const std::vector<std::string>& paths);

// `:sleep` and `:wake` write desired state: the state itself, as DELETE
// does. Sleep asks for SLEEPING (the provisioner then deletes the tenant's
// host workloads and keeps every virtual object); wake asks for
// PROVISIONING (the provisioner brings it back to READY through the usual
// conditions). A move bumps `generation`, so conditions written for the
// previous desired state are visibly stale and a status write racing the
// request is dropped; version, etag and update_time are the caller's.
// Asking for what is already asked is idempotent: the result equals
// `current` (sleep of a SLEEPING one; wake of a READY or PROVISIONING one).
// FAILED_PRECONDITION naming "state" and the state otherwise: only a READY
// virtual cluster can sleep, only a SLEEPING one can wake.
Result<VirtualCluster> RequestSleep(const VirtualCluster& current);
Result<VirtualCluster> RequestWake(const VirtualCluster& current);

}  // namespace septa::tenancy
