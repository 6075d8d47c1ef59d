// Forgets expired Idempotency-Keys in the background: one sweep at start
// (catching up after downtime), then every quarter of the keys' time to live,
// at most every 10 minutes.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include <prometheus/counter.h>
#include <prometheus/registry.h>

#include "common/clock.h"
#include "services/core/store.h"

namespace septa::app {

class IdempotencySweeper {
 public:
  IdempotencySweeper(core::Store& store, const Clock& clock, std::chrono::milliseconds ttl,
                     prometheus::Registry& registry);
  ~IdempotencySweeper();  // stops and joins
  IdempotencySweeper(const IdempotencySweeper&) = delete;
  IdempotencySweeper& operator=(const IdempotencySweeper&) = delete;

  static std::chrono::milliseconds IntervalFor(std::chrono::milliseconds ttl);

 private:
  void Run();

  core::Store& store_;
  const Clock& clock_;
  const std::chrono::milliseconds ttl_;
  prometheus::Counter& expired_total_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  std::thread thread_;  // last: starts once everything above exists
};

}  // namespace septa::app
