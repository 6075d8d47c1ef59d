// Quotas: the limits on one virtual cluster's workloads (WorkloadQuota, in
// virtual_cluster.h) and the tenant quota an admin sets over all of a
// tenant's virtual clusters, with GPUs counted as GPU-equivalents
// (tenancy/capacity.h).
#pragma once

#include <cstdint>
#include <optional>

#include "common/status.h"
#include "tenancy/virtual_cluster.h"

namespace septa::tenancy {

// Bounds of any one limit, far above a real host cluster (Kubernetes
// documents 5,000 nodes and 150,000 pods per cluster); they catch typos and
// keep sums far from overflow.
inline constexpr std::int64_t kMaxCpuMilli = 1'000'000'000;  // a million CPUs
inline constexpr std::int64_t kMaxMemoryMib = 1LL << 30;     // 1 PiB
inline constexpr std::int64_t kMaxPods = 150'000;
inline constexpr std::int64_t kMaxGpuMilli = 1'000'000'000;  // a million GPU-equivalents
inline constexpr std::int64_t kMaxVirtualClusters = 10'000;

// Each field 0 (no limit) or in 1..its bound; violations name "quota.<field>".
Status ValidateWorkloadQuota(const WorkloadQuota& quota);

// What an admin lets one tenant hold over all its virtual clusters. An
// absent field is unlimited; 0 allows none (a tenant with vclusters = 0 can
// create no virtual cluster).
struct TenantQuota {
  std::optional<std::int64_t> gpu_milli;   // GPU-equivalents, in thousandths
  std::optional<std::int64_t> cpu_milli;   // sum of the virtual clusters' quota.cpu_milli
  std::optional<std::int64_t> memory_mib;  // sum of quota.memory_mib
  std::optional<std::int64_t> pods;        // sum of quota.pods
  std::optional<std::int64_t> vclusters;   // number of virtual clusters
  bool operator==(const TenantQuota&) const = default;
};

// Each present field in 0..its bound; violations name "<field>.<member>"
// (field "quota" gives "quota.gpu_milli").
Status ValidateTenantQuota(std::string_view field, const TenantQuota& quota);

// What virtual clusters count against a tenant quota.
struct TenantUsage {
  std::int64_t gpu_milli = 0;
  std::int64_t cpu_milli = 0;  // 0 in one virtual cluster's usage: it sets no CPU limit
  std::int64_t memory_mib = 0;
  std::int64_t pods = 0;
  std::int64_t vclusters = 0;
  TenantUsage& operator+=(const TenantUsage& other);
  bool operator==(const TenantUsage&) const = default;
};

// One virtual cluster's usage: `gpu_milli` (ReservationGpuMilli of its
// reservation, or CapacityGpuMilli of its capacity before it has one), its
// workload quota's limits, and 1 virtual cluster.
TenantUsage UsageOf(std::int64_t gpu_milli, const WorkloadQuota& workload);

// Whether a new or resized virtual cluster fits its tenant's quota.
// `others`: the summed usage of the tenant's other virtual clusters
// (DELETING ones too: their capacity is held until released; one without a
// limit counts 0 for it). `requested`: the virtual cluster as asked for.
// `previous`: its usage before a resize (nullptr on create); a resize is
// never refused on a quantity it does not grow, so a tenant over a lowered
// quota can still shrink (dropping a workload limit grows that quantity;
// setting one where there was none does not).
//
// FAILED_PRECONDITION naming "quota.cpu_milli" (…memory_mib, …pods) when the
// tenant quota bounds that quantity and the virtual cluster sets no limit
// for it: unlimited would not fit any quota. RESOURCE_EXHAUSTED with one
// violation per quantity over its quota, naming "tenant.quota.<member>":
// "tenant.quota.gpu_milli: 2.500 GPU-equivalents requested, 2.000 of 3.000
// in use, 1.000 left" (requested: the virtual cluster's whole amount; in
// use: the others').
Status CheckTenantQuota(const TenantQuota& quota, const TenantUsage& others, const TenantUsage& requested,
                        const TenantUsage* previous = nullptr);

}  // namespace septa::tenancy
