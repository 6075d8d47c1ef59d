#include "services/store/pg_work.h"

namespace septa::store {

Status PgWork::Failed(const std::exception& e) {
  TranslatedError error = TranslateDatabaseError(e);
  if (error.retry || error.connection_broken) fatal_ = error;
  return error.status;
}

void PgWork::RollBackWrite() {
  if (fatal_) return;
  try {
    tx_.exec0("ROLLBACK TO SAVEPOINT septa_write");
  } catch (const std::exception& rollback_error) {
    // Only for its effect: a broken rollback makes the transaction fatal;
    // the caller is told about the write that failed first.
    (void)Failed(rollback_error);
  }
}

}  // namespace septa::store
