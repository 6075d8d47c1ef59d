// The scheduler's objects for one virtual cluster (render.h): a KAI queue
// hierarchy or Kueue flavors and queues. Internal to tenancy/host.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tenancy/host/config.h"
#include "tenancy/host/gpu_holdings.h"
#include "tenancy/trust_tier.h"
#include "tenancy/virtual_cluster.h"

namespace septa::tenancy::host {

// The tier's parent Queue, then the virtual cluster's leaf Queue (named as the host namespace).
std::vector<nlohmann::json> KaiQueues(const TrustTier& tier, const VirtualCluster& vcluster,
                                      const std::string& host_namespace, const GpuHoldings& holdings);

// ResourceFlavors (CPU/memory, then one per GPU product), the
// WorkloadPriorityClass and the ClusterQueue (both named as the host
// namespace) and the LocalQueue in the host namespace.
std::vector<nlohmann::json> KueueQueues(const VirtualCluster& vcluster, const std::string& host_namespace,
                                        const GpuHoldings& holdings);

// The syncer's extra rights in the host namespace under each scheduler.
nlohmann::json SchedulerSyncerRules(Scheduler scheduler);  // a JSON array of Role rules

}  // namespace septa::tenancy::host
