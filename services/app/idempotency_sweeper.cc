#include "services/app/idempotency_sweeper.h"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "services/core/idempotency.h"

namespace septa::app {

IdempotencySweeper::IdempotencySweeper(core::Store& store, const Clock& clock, std::chrono::milliseconds ttl,
                                       prometheus::Registry& registry)
    : store_(store),
      clock_(clock),
      ttl_(ttl),
      expired_total_(prometheus::BuildCounter()
                         .Name("septa_idempotency_keys_expired_total")
                         .Help("Idempotency-Keys forgotten after their time to live")
                         .Register(registry)
                         .Add({})),
      periodic_(IntervalFor(ttl), [this] { Sweep(); }) {}

std::chrono::milliseconds IdempotencySweeper::IntervalFor(std::chrono::milliseconds ttl) {
  return std::clamp<std::chrono::milliseconds>(ttl / 4, std::chrono::seconds(1), std::chrono::minutes(10));
}

void IdempotencySweeper::Sweep() {
  auto swept = core::SweepExpiredIdempotencyKeys(store_, clock_.Now(), ttl_);
  if (!swept.ok()) {
    spdlog::warn("idempotency key sweep failed (will retry): {}", swept.status().ToString());
  } else if (*swept > 0) {
    expired_total_.Increment(*swept);
    spdlog::info("forgot {} idempotency keys older than {} s", *swept,
                 std::chrono::duration_cast<std::chrono::seconds>(ttl_).count());
  }
}

}  // namespace septa::app
