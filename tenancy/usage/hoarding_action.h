// Acting on a hoarder (issue 34 "Act on waste", USAGE-FACTS §4 and §6): what the
// hoarding controller does about one virtual cluster, decided from its
// stored state, whether FindHoarders reports it now, and its trust tier's
// policy. Level-based: the decision depends only on these, so any replica,
// after any crash, decides the same.
//
//  - READY and a hoarder: the condition Hoarding=True (reason Idle, or
//    IdleHoldingMemory when it keeps memory loaded), saying since when and
//    what happens next. Its last_transition_time is when it was flagged;
//    once `sleep_after` (the tier's opt-in grace period) has passed since
//    then, it is put to sleep and the condition becomes False, reason
//    PutToSleep, saying why and how to wake it.
//  - READY and no longer a hoarder while flagged: Hoarding=False, reason
//    InUse. Never flagged: nothing is written (no condition on every
//    virtual cluster).
//  - Not READY while flagged (slept, woken, deleted by its tenant): False,
//    reason NotReady; after a wake the grace period starts again.
#pragma once

#include <chrono>
#include <optional>
#include <string>

#include "common/time_point.h"
#include "tenancy/condition.h"
#include "tenancy/usage/usage_math.h"
#include "tenancy/virtual_cluster.h"

namespace septa::tenancy::usage {

inline constexpr char kHoarding[] = "Hoarding";  // the virtual cluster's condition type

struct HoardingPolicy {
  std::chrono::seconds threshold{0};  // the idle time that makes a hoarder (its gpu::Tier's)
  // The grace period after being flagged before it is put to sleep; unset:
  // never (the tier does not opt in).
  std::optional<std::chrono::seconds> sleep_after{};
  std::string tier_name{};  // the trust tier's name, for messages
};

struct HoardingAction {
  std::optional<Condition> condition{};  // to set with SetCondition; unset: leave the conditions alone
  bool sleep = false;                    // put it to sleep (tenancy::RequestSleep) in the same write
};

// `hoarder`: what FindHoarders reports for this virtual cluster now, if anything.
HoardingAction DecideHoarding(const VirtualCluster& vcluster, const std::optional<Hoarder>& hoarder,
                              const HoardingPolicy& policy, TimePoint now);

}  // namespace septa::tenancy::usage
