// Hoarders now, and acting on them (issue 34 "Act on waste", docs/usage.md
// "Hoarders"): the virtual clusters all of whose held GPUs have idled past
// their tier's threshold, from the idle runs the usage accounting keeps
// (UsageRepository::AllIdleStates; a run not updated for
// `idle_stale_after` is unknown, never idle), and one pass of the hoarding
// controller over them: each virtual cluster that is a hoarder or still
// flagged gets what tenancy::usage::DecideHoarding says, in its own
// transaction over the version it read. Putting one to sleep is the
// existing sleep (tenancy::RequestSleep: the provisioner then deletes its
// workloads and, with sleep_reservation: release, gives its GPUs back),
// audited as "vcluster.sleep_idle" by "system:usage"; the condition says why.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/status.h"
#include "services/core/store.h"
#include "tenancy/usage/usage_math.h"
#include "tenancy/virtual_cluster_ref.h"

namespace septa::core {

struct HoardingSettings {
  tenancy::usage::HoardingThresholds thresholds{};
  std::chrono::milliseconds idle_stale_after{120'000};
  // By trust tier name: how long a virtual cluster stays flagged before it is
  // put to sleep. A tier not named never has its virtual clusters slept
  // (opt-in; usage_hoarding_sleep_after).
  std::map<std::string, std::chrono::seconds> sleep_after{};
};

// The hoarders now: every tenant's, or `tenant`'s only.
Result<std::vector<tenancy::usage::Hoarder>> CurrentHoarders(Tx& tx, TimePoint now, const HoardingSettings& settings,
                                                             const std::string& tenant = "");

// What one pass did (every count is of virtual clusters).
struct HoardingPass {
  int hoarders = 0;   // found now
  int flagged = 0;    // newly Hoarding=True
  int unflagged = 0;  // newly Hoarding=False (used again, not READY)
  int slept = 0;      // put to sleep
  int conflicts = 0;  // changed by another writer meanwhile: the next pass decides again
  // The ones flagged after the pass (Hoarding=True), for /metrics.
  struct Flagged {
    tenancy::usage::Hoarder hoarder{};
    std::string reason{};
  };
  std::vector<Flagged> flagged_now{};
};

class HoardingActor {
 public:
  HoardingActor(Store& store, const Clock& clock, HoardingSettings settings);

  // Acts on the virtual clusters `owns` (this replica's shards) holds.
  Result<HoardingPass> RunOnce(const std::function<bool(const tenancy::VirtualClusterRef&)>& owns);

 private:
  // Decides and writes for one virtual cluster; counts into `pass`.
  Status Act(const tenancy::VirtualClusterRef& ref, const std::optional<tenancy::usage::Hoarder>& hoarder,
             HoardingPass& pass);

  Store& store_;
  const Clock& clock_;
  HoardingSettings settings_;
};

}  // namespace septa::core
