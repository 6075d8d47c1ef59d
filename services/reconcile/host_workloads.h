// A sleeping virtual cluster's host workloads: everything of the tenant's
// that runs in its host namespace. Sleep deletes them; Septa's own objects
// (those labelled managed-by=septa: quota, limit range, network policies,
// RBAC, queues, and with control_plane host the virtual API server's
// workloads) stay, and so does every object of the virtual control plane.
// The syncer's copies are the tenant's whatever their labels say: they carry
// septa.dev/synced, and a tenant's `app.kubernetes.io/managed-by: septa` is
// refused before it could reach one (tenancy/sync/host_keys.h), so that the
// label cannot make a tenant's pod survive sleep.
#pragma once

#include <string>

#include "common/status.h"
#include "services/kube/client.h"

namespace septa::reconcile {

// Deletes every workload object (Deployments, StatefulSets, ReplicaSets,
// Jobs, then Pods) in `host_namespace` that is not Septa's, and says how
// many were still there (those it deleted now and those already
// terminating): 0 once nothing runs. Kinds the host does not serve hold
// nothing. Idempotent; the caller looks again until it says 0.
Result<int> DeleteHostWorkloads(kube::Client& host, const std::string& host_namespace);

// Whether the host already refuses new pods in `host_namespace`: its
// ResourceQuota's status.hard (what the host's admission reads, updated
// by its quota controller after the spec) holds pods at
// tenancy::host::kSleepingPods. Counting the workloads before that would
// miss a pod created right after the count.
Result<bool> NewPodsRefused(kube::Client& host, const std::string& host_namespace);

}  // namespace septa::reconcile
