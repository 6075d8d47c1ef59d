#include "services/core/idempotency.h"

namespace septa::core {

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
