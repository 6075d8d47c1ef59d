#include "services/store/pg_store.h"

#include <random>
#include <thread>

#include "services/core/deadline.h"
#include "services/store/connection_pool.h"
#include "services/store/connection_url.h"
#include "services/store/pg_errors.h"
#include "services/store/pg_tx.h"
#include "services/store/revocation_listener.h"
#include "services/store/schema_migrations.h"

namespace septa::store {
namespace {

// How one attempt of a transaction ended.
struct Attempt {
  Status status;
  bool retry = false;
  bool connection_broken = false;
  bool needs_snapshot = false;  // a single-read attempt met a second read
};

Attempt FromError(const std::exception& e) {
  TranslatedError error = TranslateDatabaseError(e);
  return {std::move(error.status), error.retry, error.connection_broken};
}

// Runs `body` in `tx` and commits iff it returned OK and the database did
// not doom the transaction meanwhile.
Attempt RunBody(pqxx::transaction_base& tx, core::TxMode mode, const std::function<Status(core::Tx&)>& body,
                bool single_read = false) {
  PgTx pg_tx(tx, mode, single_read);
  Status status;
  try {
    status = body(pg_tx);
  } catch (const std::exception& e) {
    return {Internal(std::string("transaction body threw: ") + e.what())};
  } catch (...) {
    return {Internal("transaction body threw a non-standard exception")};
  }
  if (const auto& fatal = pg_tx.fatal_error()) {
    return {fatal->status, fatal->retry, fatal->connection_broken, pg_tx.needs_snapshot()};
  }
  if (!status.ok()) return {status};             // rolled back when `tx` goes out of scope
  if (mode == core::TxMode::kDryRun) return {};  // rolled back the same way: nothing is kept
  try {
    tx.commit();
  } catch (const std::exception& e) {
    return FromError(e);
  }
  return {};
}

Attempt RunOnce(pqxx::connection& connection, core::TxMode mode, const std::function<Status(core::Tx&)>& body) {
  try {
    if (mode == core::TxMode::kReadOnly) {
      // Most reads are one statement, which is a consistent snapshot on its
      // own: run it in autocommit and save BEGIN and COMMIT, two of the
      // three round trips of a GET. A body that reads twice is run again
      // in a real snapshot transaction.
      {
        pqxx::nontransaction single(connection);
        Attempt attempt = RunBody(single, mode, body, /*single_read=*/true);
        // Nothing was written: a read cut off by a broken connection is
        // safe to run again on a new one.
        if (attempt.connection_broken) attempt.retry = true;
        if (!attempt.needs_snapshot) return attempt;
      }
      // A consistent snapshot; read-only transactions cannot lose a race.
      pqxx::transaction<pqxx::repeatable_read, pqxx::read_only> tx(connection);
      return RunBody(tx, mode, body);
    }
    pqxx::transaction<pqxx::serializable> tx(connection);
    return RunBody(tx, mode, body);
  } catch (const std::exception& e) {
    Attempt attempt = FromError(e);  // BEGIN failed: nothing ran, safe to retry on a new connection
    if (attempt.connection_broken) attempt.retry = true;
    return attempt;
  }
}

// Randomised, growing pause so that transactions that collided do not
// collide again in lockstep; never past the request's deadline.
void BackOff(int attempt, std::optional<core::DeadlineClock::time_point> deadline) {
  thread_local std::minstd_rand jitter(std::random_device{}());
  const int cap_us = std::min(50'000, 500 << std::min(attempt, 7));
  const auto until = core::DeadlineClock::now() + std::chrono::microseconds(jitter() % cap_us);
  std::this_thread::sleep_until(deadline ? std::min(until, *deadline) : until);
}

}  // namespace

PgStore::PgStore(PgStoreOptions options) : options_(std::move(options)) {
  options_.database_url = WithConnectTimeout(options_.database_url, options_.statement_timeout);
  pool_ = ConnectionPool::WithStatementTimeout(options_.database_url, options_.pool_size, options_.acquire_timeout,
                                               options_.statement_timeout, PrepareStatements);
}

PgStore::~PgStore() = default;

void PgStore::WatchRevocations(std::function<void(const core::Revocation&)> on_revocation) {
  revocation_listener_.reset();  // joins the old one first
  if (on_revocation) {
    revocation_listener_ = std::make_unique<RevocationListener>(options_.database_url, std::move(on_revocation));
  }
}

Status PgStore::Transact(core::TxMode mode, const std::function<Status(core::Tx&)>& body) {
  // Every attempt, its wait for a connection and the pauses between them
  // end by the request's deadline (core/deadline.h), if it has one.
  const auto deadline = core::CurrentDeadline();
  Status last;
  for (int attempt = 1; attempt <= options_.max_attempts; ++attempt) {
    if (attempt > 1 && deadline && core::DeadlineClock::now() >= *deadline) {
      return Unavailable("the request's deadline for the database passed after " + std::to_string(attempt - 1) +
                         " attempt(s); the last: " + last.message());
    }
    auto lease = pool_->Acquire();
    if (!lease.ok()) return lease.status();
    Attempt outcome = RunOnce(lease->connection(), mode, body);
    if (outcome.connection_broken) lease->Discard();
    if (!outcome.retry) return outcome.status;
    last = outcome.status;
    retries_total_.fetch_add(1, std::memory_order_relaxed);
    BackOff(attempt, deadline);
  }
  if (IsAborted(last)) {
    return Aborted("transaction lost " + std::to_string(options_.max_attempts) +
                   " races in a row; last: " + last.message());
  }
  return last;
}

Status PgStore::Ready() {
  // A second try on a fresh connection: after the server restarted, the
  // pool's connections are broken and the first one used finds out.
  return ToStatus(OnPooledConnection<bool>(*pool_, [&](pqxx::connection& c) -> Result<bool> {
    pqxx::read_transaction tx(c);
    auto pending = PendingMigrations(tx, options_.migrations);
    if (!pending.ok()) return pending.status();
    if (!pending->empty()) {
      return FailedPrecondition("database schema not ready: migration " + pending->front()->file_name +
                                " is not applied");
    }
    return true;
  }));
}

PgStoreStats PgStore::Stats() const { return {pool_->Stats(), retries_total_.load(std::memory_order_relaxed)}; }

}  // namespace septa::store
