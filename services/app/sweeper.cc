#include "services/app/sweeper.h"

#include <spdlog/spdlog.h>

namespace septa::app {

Sweeper::Sweeper(const Clock& clock, prometheus::Registry& registry, SweepSpec spec)
    : clock_(clock),
      spec_(std::move(spec)),
      deleted_total_(prometheus::BuildCounter().Name(spec_.metric).Help(spec_.help).Register(registry).Add({})),
      periodic_(spec_.interval, [this] { Sweep(); }) {}

void Sweeper::Sweep() {
  const Result<int> deleted = spec_.sweep(clock_.Now());
  if (!deleted.ok()) {
    spdlog::warn("sweep of {} failed (the next one tries again): {}", spec_.what, deleted.status().ToString());
    return;
  }
  deleted_total_.Increment(*deleted);
  if (*deleted > 0) spdlog::info("deleted {} {}", *deleted, spec_.what);
}

}  // namespace septa::app
