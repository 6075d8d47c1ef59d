#include "tenancy/api_limits.h"

#include <string>

namespace septa::tenancy {

namespace {

struct Member {
  const char* name;
  std::optional<std::int64_t> ApiLimits::*value;
  std::int64_t max;
};

constexpr Member kMembers[] = {
    {"objects", &ApiLimits::objects, kMaxApiObjects},
    {"object_bytes", &ApiLimits::object_bytes, kMaxApiObjectBytes},
    {"watches", &ApiLimits::watches, kMaxApiWatches},
    {"requests_in_flight", &ApiLimits::requests_in_flight, kMaxApiRequestsInFlight},
};

}  // namespace

Status ValidateApiLimits(std::string_view field, const ApiLimits& limits) {
  for (const Member& m : kMembers) {
    const std::optional<std::int64_t>& value = limits.*m.value;
    if (!value || (*value >= 0 && *value <= m.max)) continue;
    return InvalidField(std::string(field) + "." + m.name, "must be between 0 and " + std::to_string(m.max) +
                                                               " (absent: the trust tier's default), got " +
                                                               std::to_string(*value));
  }
  return Status::Ok();
}

ApiLimits EffectiveApiLimits(const ApiLimits& tier_defaults, const ApiLimits& overrides) {
  ApiLimits out = tier_defaults;
  for (const Member& m : kMembers) {
    if (overrides.*m.value) out.*m.value = overrides.*m.value;
  }
  return out;
}

}  // namespace septa::tenancy
