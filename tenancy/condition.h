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

// The condition types of a virtual cluster, one spelling each (the
// provisioner, the MIG layout controller, the use cases and the CLI's
// --wait read the same ones).
inline constexpr char kCapacityReady[] = "CapacityReady";          // its reservation holds
inline constexpr char kNamespaceReady[] = "NamespaceReady";        // its host namespace exists
inline constexpr char kQuotaReady[] = "QuotaReady";                // its host ResourceQuota is applied
inline constexpr char kQueueReady[] = "QueueReady";                // its scheduler queue is applied
inline constexpr char kControlPlaneReady[] = "ControlPlaneReady";  // its virtual API answers
inline constexpr char kSleeping[] = "Sleeping";                    // asleep: no workload left on the host
inline constexpr char kDrifted[] = "Drifted";                      // a host object was changed and restored

enum class ConditionStatus { kTrue, kFalse, kUnknown };
std::string_view ConditionStatusName(ConditionStatus status);  // "True", "False", "Unknown"

struct Condition {
  std::string type;  // CamelCase: kCapacityReady, ...
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
