// A sleeping virtual cluster's host workloads: what runs in its host
// namespace that Septa does not own (the syncer puts tenants' pods and
// their controllers there). Sleep deletes them; Septa's own objects (those
// labelled managed-by=septa: quota, limit range, network policies, RBAC,
// queues) stay, and so does every object of the virtual control plane.
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

}  // namespace septa::reconcile
