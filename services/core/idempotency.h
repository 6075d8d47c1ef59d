// How long an Idempotency-Key answers retries, and the sweep that forgets
// keys after that. A key is a promise about retries, not a permanent record
// (the audit log is that): without expiry the table grows with every create.
#pragma once

#include <chrono>
#include <string_view>

#include "common/clock.h"
#include "common/status.h"
#include "services/core/store.h"

namespace septa::core {

// A day, as common public APIs keep theirs: long enough for any client's
// retry loop, short enough that the table stays small.
inline constexpr std::chrono::milliseconds kDefaultIdempotencyTtl = std::chrono::hours(24);

// A create's Idempotency-Key: text (ValidateText) of at most 200 bytes.
Status ValidateIdempotencyKey(std::string_view key);

// Within a create's transaction, for a non-empty key: kNotFound when the key
// is free (a record older than `ttl` is deleted here and the key starts
// afresh); the resource the first request created when the key came with
// the same request `fingerprint`; ALREADY_EXISTS when it came with another.
Result<std::string> FindIdempotentCreate(Tx& tx, const std::string& principal, const std::string& key,
                                         const std::string& fingerprint, TimePoint now, std::chrono::milliseconds ttl);

// Deletes every record created more than `ttl` before `now`, in short
// transactions of at most `batch` rows; returns how many went.
Result<int> SweepExpiredIdempotencyKeys(Store& store, TimePoint now, std::chrono::milliseconds ttl, int batch = 500);

}  // namespace septa::core
