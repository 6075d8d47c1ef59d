#include "services/core/usage_retention.h"

namespace septa::core {

Result<int> SweepUsageMinutes(Store& store, TimePoint cutoff, const UsageMinuteSweep& sweep) {
  int total = 0;
  for (int batch = 0; batch < sweep.max_batches; ++batch) {
    int deleted = 0;
    SEPTA_RETURN_IF_ERROR(store.Transact(TxMode::kReadWrite, [&](Tx& tx) -> Status {
      SEPTA_ASSIGN_OR_RETURN(deleted, tx.Usage().DeleteMinutesBefore(cutoff, sweep.batch));
      return Status::Ok();
    }));
    total += deleted;
    if (deleted < sweep.batch) break;
  }
  return total;
}

}  // namespace septa::core
