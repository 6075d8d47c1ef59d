#include "tenancy/usage/idle_run.h"

namespace septa::tenancy::usage {

UsageIdleState AdvanceIdleRun(const std::optional<UsageIdleState>& carried,
                              const std::vector<IdleWindowSample>& windows, const UsageSettings& settings,
                              TimePoint now) {
  UsageIdleState state = carried.value_or(UsageIdleState{});
  bool open = carried.has_value();  // a window is being sampled
  const auto close = [&] {
    if (state.window_activity_max < settings.idle_below) {
      state.idle_ms += settings.idle_window.count();
      if (state.window_used_memory_mib) {
        state.holding_memory = *state.window_used_memory_mib > settings.holding_memory_above_mib;
      }
    } else {
      state.idle_ms = 0;
      state.holding_memory = false;
    }
  };
  for (const IdleWindowSample& window : windows) {
    if (open && window.start < state.window_start) continue;  // older than the window kept: already counted
    if (open && window.start == state.window_start) {
      state.window_activity_max = std::max(state.window_activity_max, window.activity_max);
      if (window.used_memory_mib) state.window_used_memory_mib = window.used_memory_mib;
      continue;
    }
    if (open) close();
    state.window_start = window.start;
    state.window_activity_max = window.activity_max;
    state.window_used_memory_mib = window.used_memory_mib;
    open = true;
  }
  state.updated = now;
  return state;
}

}  // namespace septa::tenancy::usage
