// What septad keeps only for a while, deleted in the background by every
// replica (app::Sweeper): one-minute usage rows past usage_minute_retention
// (docs/usage.md "Retention": hours and days stay, so that a report by the
// hour or day never changes and one by the minute reaches back that far),
// and API tokens dead (revoked or expired) for longer than token_retention
// (a pipeline's exchanged tokens would otherwise pile up for ever; a dead
// token authenticates nothing, and its audit records stay).
#pragma once

#include "common/status.h"
#include "common/time_point.h"
#include "services/core/store.h"

namespace septa::core {

struct BatchedSweep {
  int batch = 10'000;     // rows per transaction: a sweep never holds the database long
  int max_batches = 100;  // per sweep; the next sweep goes on
};

// Each deletes, oldest first, in transactions of `sweep.batch` rows, until
// none is left or `sweep.max_batches` ran; the number deleted. Idempotent:
// replicas may sweep at once.
// The minute rows before `cutoff`.
Result<int> SweepUsageMinutes(Store& store, TimePoint cutoff, const BatchedSweep& sweep = {});
// The API tokens dead before `dead_before`, with the sessions made from
// them, and the sessions and sign-in codes dead before then; people's
// portal sessions dead before then and their sign-ins expired before then.
Result<int> SweepDeadTokens(Store& store, TimePoint dead_before, const BatchedSweep& sweep = {.batch = 1'000});

}  // namespace septa::core
