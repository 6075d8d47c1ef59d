// A tenant's virtual cluster as the use cases and the store see it: the
// desired state a request writes (capacity, quota, queue) and the observed
// state reconcilers write back (state, conditions, host namespace, endpoint).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/time_point.h"
#include "gpu/inventory.h"
#include "tenancy/api_limits.h"
#include "tenancy/condition.h"

namespace septa::tenancy {

enum class VirtualClusterState { kProvisioning, kReady, kSleeping, kDeleting, kFailed };
std::string_view VirtualClusterStateName(VirtualClusterState state);  // "PROVISIONING", ...

// `isolated`: `count` MIG instances of `profile`, on GPUs of `model` when set.
struct MigCapacity {
  std::string profile;  // "3g.40gb", as in GPU-FACTS.md
  int count = 0;
  std::string model;  // canonical catalog name; empty: any model with the profile
  bool operator==(const MigCapacity&) const = default;
};

// What a virtual cluster holds; exactly the part of its tier is set.
struct Capacity {
  gpu::Tier tier = gpu::Tier::kShared;
  // shared: a budget of GPU fractions in the shared pool.
  int milli_gpu = 0;
  std::int64_t gpu_memory_mib = 0;
  // isolated:
  std::vector<MigCapacity> mig;
  // dedicated: `count` whole GPUs; exclusive: `count` whole nodes; of `model` when set.
  std::string model;
  int count = 0;
  bool operator==(const Capacity&) const = default;
};

// Limits on the virtual cluster's workloads (rendered to a ResourceQuota); 0 = none.
struct WorkloadQuota {
  std::int64_t cpu_milli = 0;
  std::int64_t memory_mib = 0;
  std::int64_t pods = 0;
  bool operator==(const WorkloadQuota&) const = default;
};

// Fair-share settings, rendered to a KAI Queue or a Kueue ClusterQueue.
struct QueueSettings {
  int priority = 100;
  int over_quota_weight = 1;
  bool operator==(const QueueSettings&) const = default;
};

struct VirtualCluster {
  std::string tenant;
  std::string name;  // DNS-1123 label, 1-40 chars, unique per tenant, immutable
  std::string display_name;
  Capacity capacity;
  WorkloadQuota quota;
  QueueSettings queue;
  // An admin's overrides of the trust tier's API limits; absent members: the tier's.
  ApiLimits api_limits;
  VirtualClusterState state = VirtualClusterState::kProvisioning;
  std::vector<Condition> conditions;
  // output: given when the virtual cluster is created (HostNamespaceName)
  // and never changed, unique (the store refuses a second holder)
  std::string host_namespace;
  std::string endpoint;         // output, filled by the provisioner
  std::int64_t generation = 1;  // bumped by changes to the desired state (capacity, quota, queue, sleep, wake)
  std::int64_t version = 1;     // bumped by every change; the etag is derived from it
  TimePoint create_time{};
  TimePoint update_time{};
  // Not shown: the provisioner may have written to the host for it (set
  // before its first write), so that its deletion goes through DELETING.
  bool on_host = false;
};

}  // namespace septa::tenancy
