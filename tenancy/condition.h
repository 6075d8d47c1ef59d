// Status conditions, as Kubernetes writes them (metav1.Condition): what a
// reconciler last observed about one aspect of a resource. Reconcilers set
// them; clients read them to see why a resource is not yet what they asked.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/time_point.h"

namespace septa::tenancy {

enum class ConditionStatus { kTrue, kFalse, kUnknown };
std::string_view ConditionStatusName(ConditionStatus status);  // "True", "False", "Unknown"

struct Condition {
  std::string type;  // CamelCase: "CapacityReady", "Provisioned", "Ready"
  ConditionStatus status = ConditionStatus::kUnknown;
  std::string reason;   // CamelCase, machine-readable: "MigRelayoutPending"
  std::string message;  // for people
  TimePoint last_transition_time{};
  std::int64_t observed_generation = 0;  // the resource generation the reconciler acted on
  bool operator==(const Condition&) const = default;
};

// Sets `condition` among `conditions` (one per type, kept in insertion
// order). last_transition_time becomes `now` when the type is new or its
// status changes, and is kept otherwise, so it says since when the status
// holds. Returns true when anything changed (the caller writes back only
// then).
bool SetCondition(std::vector<Condition>& conditions, Condition condition, TimePoint now);

// nullptr when no condition of that type is set.
const Condition* FindCondition(const std::vector<Condition>& conditions, std::string_view type);

}  // namespace septa::tenancy
