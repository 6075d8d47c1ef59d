#include "services/core/idempotency.h"

#include "common/text.h"

namespace septa::core {

Status ValidateIdempotencyKey(std::string_view key) {
  constexpr std::size_t kMaxBytes = 200;
  return ValidateText("idempotency_key", key, kMaxBytes);
}

Result<std::string> FindIdempotentCreate(Tx& tx, const std::string& principal, const std::string& key,
                                         const std::string& fingerprint, TimePoint now, std::chrono::milliseconds ttl) {
  auto previous = tx.Idempotency().Get(principal, key);
  if (previous.ok() && previous->create_time + ttl <= now) {
    // Expired but not swept yet: the key starts afresh.
    SEPTA_RETURN_IF_ERROR(tx.Idempotency().Delete(principal, key));
    return NotFound("idempotency key expired");
  }
  SEPTA_RETURN_IF_ERROR(previous);
  if (previous->request_hash != fingerprint) {
    return AlreadyExists("Idempotency-Key \"" + key + "\" was already used with a different request");
  }
  return previous->resource;
}

Result<int> SweepExpiredIdempotencyKeys(Store& store, TimePoint now, std::chrono::milliseconds ttl, int batch) {
  const TimePoint cutoff = now - ttl;
  int total = 0;
  for (;;) {
    int deleted = 0;
    Status st = store.Transact(TxMode::kReadWrite, [&](Tx& tx) -> Status {
      auto n = tx.Idempotency().DeleteBefore(cutoff, batch);
      SEPTA_RETURN_IF_ERROR(n);
      deleted = *n;
      return Status::Ok();
    });
    if (!st.ok()) return st;
    total += deleted;
    if (deleted < batch) return total;
  }
}

}  // namespace septa::core
