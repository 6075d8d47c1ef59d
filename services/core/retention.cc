#include "services/core/retention.h"

#include <functional>

namespace septa::core {

namespace {

Result<int> SweepInBatches(Store& store, const BatchedSweep& sweep,
                           const std::function<Result<int>(Tx& tx, int batch)>& delete_batch) {
  int total = 0;
  for (int batch = 0; batch < sweep.max_batches; ++batch) {
    int deleted = 0;
    SEPTA_RETURN_IF_ERROR(store.Transact(TxMode::kReadWrite, [&](Tx& tx) -> Status {
      SEPTA_ASSIGN_OR_RETURN(deleted, delete_batch(tx, sweep.batch));
      return Status::Ok();
    }));
    total += deleted;
    if (deleted < sweep.batch) break;
  }
  return total;
}

}  // namespace

Result<int> SweepUsageMinutes(Store& store, TimePoint cutoff, const BatchedSweep& sweep) {
  return SweepInBatches(store, sweep, [&](Tx& tx, int batch) { return tx.Usage().DeleteMinutesBefore(cutoff, batch); });
}

Result<int> SweepDeadTokens(Store& store, TimePoint dead_before, const BatchedSweep& sweep) {
  SEPTA_ASSIGN_OR_RETURN(const int tokens, SweepInBatches(store, sweep, [&](Tx& tx, int batch) {
                           return tx.Tokens().DeleteDead(dead_before, batch);
                         }));
  // People's portal sessions on the same retention, and their sign-ins
  // expired as long ago (of no use once expired, but kept no longer than
  // the rest: the sweep has no other clock).
  SEPTA_ASSIGN_OR_RETURN(const int people, SweepInBatches(store, sweep, [&](Tx& tx, int batch) {
                           return tx.PersonSessions().DeleteDead(dead_before, dead_before, batch);
                         }));
  return tokens + people;
}

}  // namespace septa::core
