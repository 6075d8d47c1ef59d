// An entity's idle run across scrapes (Run:ai's rule, USAGE-FACTS §4):
// ComputeUsage reports the idle windows one scrape's samples fell in
// (EntityUsage::windows); this carries the run from one scrape to the next.
// A window closes when a later one is sampled: idle (largest activity below
// `idle_below`) adds a whole `idle_window` to the run, active ends it.
// Windows without samples neither add nor end it, as in ComputeUsage. The
// run therefore counts completed windows only, and an entity held from
// mid-window is credited the whole window: at most one window (30 s) off,
// against thresholds of 15 minutes and more.
#pragma once

#include <chrono>
#include <optional>
#include <vector>

#include "tenancy/usage/usage_math.h"
#include "tenancy/usage/usage_rows.h"

namespace septa::tenancy::usage {

// `carried` is the entity's state after the previous scrape (nullopt: none);
// `windows` are this scrape's, in order. Returns the new state (key and tier
// copied from `carried` or left for the caller), stamped `now`.
UsageIdleState AdvanceIdleRun(const std::optional<UsageIdleState>& carried,
                              const std::vector<IdleWindowSample>& windows, const UsageSettings& settings,
                              TimePoint now);

// A carried state as FindHoarders reads it.
inline EntityIdle EntityIdleOf(const UsageIdleState& state) {
  return {.holder = {.tenant = state.entity.tenant, .vcluster = state.entity.vcluster, .tier = state.tier},
          .idle = std::chrono::milliseconds(state.idle_ms),
          .holding_memory = state.holding_memory};
}

}  // namespace septa::tenancy::usage
