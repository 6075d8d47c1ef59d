#include "tenancy/validation.h"

#include <string>

#include "tenancy/api_limits.h"
#include "tenancy/capacity.h"
#include "tenancy/names.h"
#include "tenancy/quota.h"

namespace septa::tenancy {

namespace {

Status CheckRange(const char* field, int value, int min, int max) {
  if (value >= min && value <= max) return Status::Ok();
  return InvalidField(field, "must be between " + std::to_string(min) + " and " + std::to_string(max) + ", got " +
                                 std::to_string(value));
}

}  // namespace

Status ValidateQueueSettings(const QueueSettings& queue) {
  SEPTA_RETURN_IF_ERROR(CheckRange("queue.priority", queue.priority, kMinPriority, kMaxPriority));
  return CheckRange("queue.over_quota_weight", queue.over_quota_weight, 0, kMaxOverQuotaWeight);
}

Status ValidateVirtualClusterSpec(const VirtualCluster& vcluster, gpu::Tier tier, const gpu::Catalog& catalog) {
  SEPTA_RETURN_IF_ERROR(ValidateVirtualClusterName("name", vcluster.name));
  SEPTA_RETURN_IF_ERROR(ValidateDisplayName("display_name", vcluster.display_name));
  SEPTA_RETURN_IF_ERROR(ValidateWorkloadQuota(vcluster.quota));
  SEPTA_RETURN_IF_ERROR(ValidateQueueSettings(vcluster.queue));
  SEPTA_RETURN_IF_ERROR(ValidateApiLimits("api_limits", vcluster.api_limits));
  // Last: a malformed field is INVALID_ARGUMENT even when the capacity is also of the wrong kind.
  return ValidateCapacity(vcluster.capacity, tier, catalog);
}

}  // namespace septa::tenancy
