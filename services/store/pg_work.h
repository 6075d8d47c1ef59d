// The database work of one transaction, shared by its repositories: reads
// that turn exceptions into a Status, writes under a savepoint so a failed
// write leaves the transaction usable, and the error that dooms the whole
// transaction (lost race, broken connection) whatever the body made of it.
// Internal to services/store; see PgStore for the transaction's life cycle.
#pragma once

#include <optional>
#include <pqxx/pqxx>

#include "services/core/store.h"
#include "services/store/pg_errors.h"

namespace septa::store {

class PgWork {
 public:
  // `single_read`: `tx` is an autocommit (non)transaction in which exactly
  // one statement sees a consistent snapshot; a second read ends the attempt
  // with needs_snapshot() so that the caller runs the body again in a real
  // snapshot transaction.
  PgWork(pqxx::transaction_base& tx, core::TxMode mode, bool single_read)
      : tx_(tx), mode_(mode), single_read_(single_read) {}

  const std::optional<TranslatedError>& fatal_error() const { return fatal_; }
  bool needs_snapshot() const { return needs_snapshot_; }

  // Runs `read` (given the transaction) and turns any exception into a Status.
  template <typename T, typename F>
  Result<T> Read(F&& read) {
    if (single_read_ && reads_++ > 0) {
      needs_snapshot_ = true;
      fatal_ = TranslatedError{Aborted("a second read needs a snapshot transaction"), true, false};
      return fatal_->status;
    }
    try {
      return read(tx_);
    } catch (const std::exception& e) {
      return Failed(e);
    }
  }

  // Runs `write` (given the transaction) under a savepoint; returns how many
  // rows the result it returns changed.
  template <typename F>
  Result<std::size_t> Write(F&& write) {
    if (mode_ == core::TxMode::kReadOnly) return FailedPrecondition("write in a read-only transaction");
    try {
      tx_.exec0("SAVEPOINT septa_write");
    } catch (const std::exception& e) {
      return Failed(e);
    }
    try {
      const pqxx::result result = write(tx_);
      tx_.exec0("RELEASE SAVEPOINT septa_write");
      return result.affected_rows();
    } catch (const std::exception& e) {
      const Status failed = Failed(e);
      RollBackWrite();
      return failed;
    }
  }

 private:
  Status Failed(const std::exception& e);
  void RollBackWrite();

  pqxx::transaction_base& tx_;
  core::TxMode mode_;
  bool single_read_;
  int reads_ = 0;
  bool needs_snapshot_ = false;
  std::optional<TranslatedError> fatal_;
};

}  // namespace septa::store
