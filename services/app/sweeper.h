// The background deletion of what septad keeps only for a while (expired
// Idempotency-Keys, one-minute usage rows past their retention, API tokens
// dead for longer than token_retention): one sweep at start (catching up
// after downtime), then every `interval`; what it deleted counted and
// logged, a failure logged and tried again at the next sweep. Every replica
// sweeps: a row is deleted once, by whoever gets there first.
#pragma once

#include <chrono>
#include <functional>
#include <string>

#include <prometheus/counter.h>
#include <prometheus/registry.h>

#include "common/clock.h"
#include "common/status.h"
#include "services/base/periodic.h"

namespace septa::app {

struct SweepSpec {
  std::string what;  // what is deleted, for the log: "idempotency keys older than 86400 s"
  std::chrono::milliseconds interval{std::chrono::hours(1)};
  // Deletes what is due at `now`; the number deleted.
  std::function<Result<int>(TimePoint now)> sweep;
  std::string metric;  // a counter of what was deleted: "septa_usage_minutes_deleted_total"
  std::string help;
};

class Sweeper {
 public:
  Sweeper(const Clock& clock, prometheus::Registry& registry, SweepSpec spec);
  Sweeper(const Sweeper&) = delete;
  Sweeper& operator=(const Sweeper&) = delete;
  ~Sweeper() = default;  // stops and joins

 private:
  void Sweep();

  const Clock& clock_;
  const SweepSpec spec_;
  prometheus::Counter& deleted_total_;
  base::Periodic periodic_;  // last: starts once everything above exists
};

}  // namespace septa::app
