// Deletes one-minute usage rows older than usage_minute_retention
// (core::SweepUsageMinutes; hours and days stay): one sweep at start
// (catching up after downtime), then every hour. Every replica sweeps: a
// row is deleted once, by whoever gets there first.
#pragma once

#include <chrono>

#include <prometheus/counter.h>
#include <prometheus/registry.h>

#include "common/clock.h"
#include "services/base/periodic.h"
#include "services/core/store.h"

namespace septa::app {

class UsageRetention {
 public:
  UsageRetention(core::Store& store, const Clock& clock, std::chrono::milliseconds retention,
                 prometheus::Registry& registry);
  UsageRetention(const UsageRetention&) = delete;
  UsageRetention& operator=(const UsageRetention&) = delete;

 private:
  void Sweep();

  core::Store& store_;
  const Clock& clock_;
  const std::chrono::milliseconds retention_;
  prometheus::Counter& deleted_total_;
  base::Periodic periodic_;  // last: starts once everything above exists
};

}  // namespace septa::app
