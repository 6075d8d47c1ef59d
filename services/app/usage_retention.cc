#include "services/app/usage_retention.h"

#include <spdlog/spdlog.h>

#include "services/core/usage_retention.h"

namespace septa::app {

UsageRetention::UsageRetention(core::Store& store, const Clock& clock, std::chrono::milliseconds retention,
                               prometheus::Registry& registry)
    : store_(store),
      clock_(clock),
      retention_(retention),
      deleted_total_(prometheus::BuildCounter()
                         .Name("septa_usage_minutes_deleted_total")
                         .Help("One-minute usage rows deleted after usage_minute_retention (hours and days stay)")
                         .Register(registry)
                         .Add({})),
      periodic_(std::chrono::hours(1), [this] { Sweep(); }) {}

void UsageRetention::Sweep() {
  const Result<int> deleted = core::SweepUsageMinutes(store_, clock_.Now() - retention_);
  if (!deleted.ok()) {
    spdlog::warn("usage retention sweep failed (the next one tries again): {}", deleted.status().ToString());
    return;
  }
  deleted_total_.Increment(*deleted);
  if (*deleted > 0) {
    spdlog::info("usage: deleted {} one-minute rows older than {} h", *deleted,
                 std::chrono::duration_cast<std::chrono::hours>(retention_).count());
  }
}

}  // namespace septa::app
