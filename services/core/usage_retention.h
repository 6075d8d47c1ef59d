// The retention of one-minute usage rows (docs/usage.md "Retention"):
// minutes older than the cutoff are deleted, hours and days stay, so that
// a report by the hour or day never changes and a report by the minute
// reaches back usage_minute_retention.
#pragma once

#include "common/status.h"
#include "common/time_point.h"
#include "services/core/store.h"

namespace septa::core {

struct UsageMinuteSweep {
  int batch = 10'000;     // rows per transaction: a sweep never holds the database long
  int max_batches = 100;  // per sweep; the next sweep goes on
};

// Deletes the minute rows before `cutoff`, oldest first, in transactions of
// `sweep.batch` rows, until none is left or `sweep.max_batches` ran; the
// number deleted. Idempotent: replicas may sweep at once.
Result<int> SweepUsageMinutes(Store& store, TimePoint cutoff, const UsageMinuteSweep& sweep = {});

}  // namespace septa::core
