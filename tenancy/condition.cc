#include "tenancy/condition.h"

#include <algorithm>

namespace septa::tenancy {

std::string_view ConditionStatusName(ConditionStatus status) {
  switch (status) {
    case ConditionStatus::kTrue: return "True";
    case ConditionStatus::kFalse: return "False";
    case ConditionStatus::kUnknown: return "Unknown";
  }
  return "Unknown";
}

bool SetCondition(std::vector<Condition>& conditions, Condition condition, TimePoint now) {
  auto it =
      std::find_if(conditions.begin(), conditions.end(), [&](const Condition& c) { return c.type == condition.type; });
  if (it == conditions.end()) {
    condition.last_transition_time = now;
    conditions.push_back(std::move(condition));
    return true;
  }
  condition.last_transition_time = it->status == condition.status ? it->last_transition_time : now;
  if (*it == condition) return false;
  *it = std::move(condition);
  return true;
}

const Condition* FindCondition(const std::vector<Condition>& conditions, std::string_view type) {
  auto it = std::find_if(conditions.begin(), conditions.end(), [&](const Condition& c) { return c.type == type; });
  return it == conditions.end() ? nullptr : &*it;
}

}  // namespace septa::tenancy
