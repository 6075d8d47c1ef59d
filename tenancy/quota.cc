#include "tenancy/quota.h"

#include <limits>
#include <string>
#include <vector>

#include "tenancy/capacity.h"

namespace septa::tenancy {

namespace {

Status CheckLimit(const std::string& field, std::int64_t value, std::int64_t min, std::int64_t max) {
  if (value >= min && value <= max) return Status::Ok();
  return InvalidField(field, "must be between " + std::to_string(min) + " and " + std::to_string(max) +
                                 (min == 0 ? " (0: no limit)" : "") + ", got " + std::to_string(value));
}

// One quantity a tenant quota bounds: how to read it and how to say it.
struct Quantity {
  const char* member;  // TenantQuota / TenantUsage / WorkloadQuota field
  std::optional<std::int64_t> TenantQuota::*limit;
  std::int64_t TenantUsage::*used;
  std::int64_t max;
  bool workload_limit;  // set by the virtual cluster's own quota (0 there: no limit)
  std::string (*format)(std::int64_t);
  const char* unit;
};

std::string Plain(std::int64_t value) { return std::to_string(value); }

const Quantity kQuantities[] = {
    {"gpu_milli", &TenantQuota::gpu_milli, &TenantUsage::gpu_milli, kMaxGpuMilli, false, &FormatMilli,
     "GPU-equivalents"},
    {"cpu_milli", &TenantQuota::cpu_milli, &TenantUsage::cpu_milli, kMaxCpuMilli, true, &FormatMilli, "CPUs"},
    {"memory_mib", &TenantQuota::memory_mib, &TenantUsage::memory_mib, kMaxMemoryMib, true, &Plain, "MiB"},
    {"pods", &TenantQuota::pods, &TenantUsage::pods, kMaxPods, true, &Plain, "pods"},
    {"vclusters", &TenantQuota::vclusters, &TenantUsage::vclusters, kMaxVirtualClusters, false, &Plain,
     "virtual clusters"},
};

// How much a virtual cluster may use of a quantity: its limit, where a
// workload limit of 0 means none.
std::int64_t Bound(const Quantity& q, std::int64_t value) {
  return q.workload_limit && value == 0 ? std::numeric_limits<std::int64_t>::max() : value;
}

std::string JoinViolations(const std::vector<FieldViolation>& violations) {
  std::string message;
  for (const FieldViolation& v : violations) message += (message.empty() ? "" : "; ") + v.field + ": " + v.description;
  return message;
}

}  // namespace

Status ValidateWorkloadQuota(const WorkloadQuota& quota) {
  SEPTA_RETURN_IF_ERROR(CheckLimit("quota.cpu_milli", quota.cpu_milli, 0, kMaxCpuMilli));
  SEPTA_RETURN_IF_ERROR(CheckLimit("quota.memory_mib", quota.memory_mib, 0, kMaxMemoryMib));
  return CheckLimit("quota.pods", quota.pods, 0, kMaxPods);
}

Status ValidateTenantQuota(std::string_view field, const TenantQuota& quota) {
  for (const Quantity& q : kQuantities) {
    const std::optional<std::int64_t>& limit = quota.*q.limit;
    if (!limit) continue;
    const std::string path = std::string(field) + "." + q.member;
    if (*limit < 0 || *limit > q.max) {
      return InvalidField(path, "must be between 0 and " + std::to_string(q.max) + " (absent: unlimited), got " +
                                    std::to_string(*limit));
    }
  }
  return Status::Ok();
}

TenantUsage& TenantUsage::operator+=(const TenantUsage& other) {
  for (const Quantity& q : kQuantities) this->*q.used += other.*q.used;
  return *this;
}

TenantUsage UsageOf(std::int64_t gpu_milli, const WorkloadQuota& workload) {
  return {gpu_milli, workload.cpu_milli, workload.memory_mib, workload.pods, 1};
}

Status CheckTenantQuota(const TenantQuota& quota, const TenantUsage& others, const TenantUsage& requested,
                        const TenantUsage* previous) {
  std::vector<FieldViolation> unlimited;
  std::vector<FieldViolation> exhausted;
  for (const Quantity& q : kQuantities) {
    const std::optional<std::int64_t>& limit = quota.*q.limit;
    if (!limit) continue;
    const std::int64_t asked = requested.*q.used;
    if (previous != nullptr && Bound(q, asked) <= Bound(q, previous->*q.used)) continue;  // does not grow
    if (q.workload_limit && asked == 0) {
      unlimited.push_back({std::string("quota.") + q.member, std::string("must be set: the tenant's quota allows ") +
                                                                 q.format(*limit) + " " + q.unit + " in all"});
      continue;
    }
    const std::int64_t used = others.*q.used;
    if (used + asked <= *limit) continue;
    const std::int64_t left = used >= *limit ? 0 : *limit - used;
    std::string unit = q.unit;
    if (asked == 1 && q.format == &Plain && unit.back() == 's') unit.pop_back();  // "1 pod"
    exhausted.push_back({std::string("tenant.quota.") + q.member, q.format(asked) + " " + unit + " requested, " +
                                                                      q.format(used) + " of " + q.format(*limit) +
                                                                      " in use, " + q.format(left) + " left"});
  }
  if (!unlimited.empty()) {
    std::string message = JoinViolations(unlimited);
    return Status(Code::kFailedPrecondition, std::move(message), std::move(unlimited));
  }
  if (!exhausted.empty()) {
    std::string message = JoinViolations(exhausted);
    return Status(Code::kResourceExhausted, std::move(message), std::move(exhausted));
  }
  return Status::Ok();
}

}  // namespace septa::tenancy
