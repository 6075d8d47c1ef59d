// The hoarding controller (issue 34 "Act on waste", docs/usage.md
// "Hoarders"): every `interval` one pass of core::HoardingActor over the
// virtual clusters whose shard this replica's provisioner holds (the
// provisioner then acts on what the pass wrote, on the same replica).
// Level-based: a pass reads the idle runs and the stored conditions
// afresh, so a crash or a lost pass changes nothing but when.
//
// Metrics: septa_gpu_hoarding{tenant,vcluster,tier,reason} = 1 for each
// virtual cluster flagged by this replica's last pass (reason Idle or
// IdleHoldingMemory; the set is replaced at every pass, so it is bounded
// by the virtual clusters flagged), septa_usage_hoarding_actions_total
// {action="flagged"|"unflagged"|"slept"|"conflict"}, septa_usage_hoarding_passes_total
// {result="ok"|"error"}.
#pragma once

#include <chrono>
#include <memory>
#include <mutex>

#include "services/base/periodic.h"
#include "services/core/usage_hoarding.h"
#include "services/reconcile/shard_leases.h"

namespace prometheus {
class Registry;
}  // namespace prometheus

namespace septa::reconcile {

struct HoardingControllerOptions {
  std::chrono::milliseconds interval{30'000};
  ShardLeases* shards = nullptr;  // the provisioner's; nullptr: every virtual cluster
};

class HoardingController {
 public:
  HoardingController(HoardingControllerOptions options, core::HoardingActor& actor, prometheus::Registry& metrics);
  ~HoardingController();  // stops and joins
  HoardingController(const HoardingController&) = delete;
  HoardingController& operator=(const HoardingController&) = delete;

  // One pass now (the thread's, and tests').
  Result<core::HoardingPass> RunOnce();

 private:
  bool Owns(const tenancy::VirtualClusterRef& ref) const;

  struct Instruments;
  HoardingControllerOptions options_;
  core::HoardingActor& actor_;
  std::unique_ptr<Instruments> instruments_;
  std::mutex pass_mu_;
  base::Periodic periodic_;  // last: starts once everything above exists
};

}  // namespace septa::reconcile
