// How long an Idempotency-Key answers retries, and the sweep that forgets
// keys after that. A key is a promise about retries, not a permanent record
// (the audit log is that): without expiry the table grows with every create.
#pragma once

#include <chrono>

#include "common/clock.h"
#include "common/status.h"
#include "services/core/store.h"

namespace septa::core {

// A day, as common public APIs keep theirs: long enough for any client's
// retry loop, short enough that the table stays small.
inline constexpr std::chrono::milliseconds kDefaultIdempotencyTtl = std::chrono::hours(24);

// Deletes every record created more than `ttl` before `now`, in short
// transactions of at most `batch` rows; returns how many went.
Result<int> SweepExpiredIdempotencyKeys(Store& store, TimePoint now, std::chrono::milliseconds ttl, int batch = 500);

}  // namespace septa::core
