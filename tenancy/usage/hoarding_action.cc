#include "tenancy/usage/hoarding_action.h"

#include "common/duration.h"

namespace septa::tenancy::usage {
namespace {

std::string Seconds(std::chrono::seconds d) { return FormatDuration(d); }

Condition Hoarding(ConditionStatus status, std::string reason, std::string message, const VirtualCluster& vc) {
  return {.type = kHoarding,
          .status = status,
          .reason = std::move(reason),
          .message = std::move(message),
          .last_transition_time = {},
          .observed_generation = vc.generation};
}

bool Flagged(const VirtualCluster& vc) {
  const Condition* c = FindCondition(vc.conditions, kHoarding);
  return c != nullptr && c->status == ConditionStatus::kTrue;
}

}  // namespace

HoardingAction DecideHoarding(const VirtualCluster& vcluster, const std::optional<Hoarder>& hoarder,
                              const HoardingPolicy& policy, TimePoint now) {
  const bool flagged = Flagged(vcluster);
  if (vcluster.state != VirtualClusterState::kReady) {
    if (!flagged) return {};
    return {.condition = Hoarding(ConditionStatus::kFalse, "NotReady",
                                  "the virtual cluster is " + std::string(VirtualClusterStateName(vcluster.state)) +
                                      ": it is not watched for idle GPUs until it is READY again",
                                  vcluster)};
  }
  if (!hoarder) {
    if (!flagged) return {};
    return {.condition = Hoarding(ConditionStatus::kFalse, "InUse",
                                  "its GPUs are no longer all idle past the " + Seconds(policy.threshold) +
                                      " threshold of trust tier " + policy.tier_name,
                                  vcluster)};
  }
  // Flagged since then (now when it is flagged by this decision).
  const TimePoint since = flagged ? FindCondition(vcluster.conditions, kHoarding)->last_transition_time : now;
  const std::string idle = "every GPU it holds has been idle for at least " + Seconds(policy.threshold) +
                           " (the threshold of trust tier " + policy.tier_name + ")" +
                           (hoarder->holding_memory ? ", with memory still allocated" : "");
  if (policy.sleep_after && now >= since + *policy.sleep_after) {
    return {.condition = Hoarding(ConditionStatus::kFalse, "PutToSleep",
                                  "put to sleep at " + FormatRfc3339(now) + ": " + idle + ", and for " +
                                      Seconds(*policy.sleep_after) +
                                      " more after it was flagged; wake it when it has work (septactl vcluster wake " +
                                      vcluster.name + " --tenant " + vcluster.tenant + ", or POST /v1/tenants/" +
                                      vcluster.tenant + "/vclusters/" + vcluster.name + ":wake)",
                                  vcluster),
            .sleep = true};
  }
  const std::string next =
      policy.sleep_after
          ? "; it will be put to sleep at " + FormatRfc3339(since + *policy.sleep_after) + " unless it is used"
          : "; trust tier " + policy.tier_name + " does not put idle virtual clusters to sleep";
  return {.condition = Hoarding(ConditionStatus::kTrue, hoarder->holding_memory ? "IdleHoldingMemory" : "Idle",
                                idle + next, vcluster)};
}

}  // namespace septa::tenancy::usage
