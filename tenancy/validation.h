// Validation of a virtual cluster's desired state as a client writes it.
#pragma once

#include "common/status.h"
#include "gpu/catalog.h"
#include "gpu/inventory.h"
#include "tenancy/virtual_cluster.h"

namespace septa::tenancy {

// Queue settings are rendered to KAI (Queue spec.priority, any int, default
// 100; overQuotaWeight, a non-negative number, 0 takes no share above quota)
// and to Kueue (WorkloadPriorityClass value, an int32; ClusterQueue
// fairSharing.weight, default 1, 0 an infinite share value: always last).
// Septa keeps the ranges that mean the same in both.
inline constexpr int kMinPriority = 0;
inline constexpr int kMaxPriority = 1000;
inline constexpr int kMaxOverQuotaWeight = 1000;  // 0: never more than its quota

// Violations name "queue.priority" or "queue.over_quota_weight".
Status ValidateQueueSettings(const QueueSettings& queue);

// Everything a client writes on create: name, display_name, capacity (for a
// tenant whose tier shares GPUs as `tier`), quota, queue and api_limits. Output fields
// are not looked at.
Status ValidateVirtualClusterSpec(const VirtualCluster& vcluster, gpu::Tier tier, const gpu::Catalog& catalog);

}  // namespace septa::tenancy
