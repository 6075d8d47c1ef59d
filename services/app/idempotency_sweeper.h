// Forgets expired Idempotency-Keys in the background: one sweep at start
// (catching up after downtime), then every quarter of the keys' time to live,
// at most every 10 minutes.
#pragma once

#include <chrono>

#include <prometheus/counter.h>
#include <prometheus/registry.h>

#include "common/clock.h"
#include "services/base/periodic.h"
#include "services/core/store.h"

namespace septa::app {

class IdempotencySweeper {
 public:
  IdempotencySweeper(core::Store& store, const Clock& clock, std::chrono::milliseconds ttl,
                     prometheus::Registry& registry);
  ~IdempotencySweeper() = default;  // stops and joins
  IdempotencySweeper(const IdempotencySweeper&) = delete;
  IdempotencySweeper& operator=(const IdempotencySweeper&) = delete;

  static std::chrono::milliseconds IntervalFor(std::chrono::milliseconds ttl);

 private:
  void Sweep();

  core::Store& store_;
  const Clock& clock_;
  const std::chrono::milliseconds ttl_;
  prometheus::Counter& expired_total_;
  base::Periodic periodic_;  // last: starts once everything above exists
};

}  // namespace septa::app
