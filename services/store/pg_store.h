// core::Store on PostgreSQL (libpqxx), over a bounded connection pool.
//
//   store::PgStore store({.database_url = url, .migrations = *store::EmbeddedMigrations()});
//   SEPTA_RETURN_IF_ERROR(store.Ready());
//
// Read-write transactions run SERIALIZABLE and are retried (body run again)
// on serialization failure or deadlock, up to max_attempts; read-only ones
// run REPEATABLE READ READ ONLY. Database errors become Status values here:
// unique violation -> kAlreadyExists; foreign key / check violation ->
// kInvalidArgument naming the field; lost race -> kAborted; broken
// connection, unreachable database, exhausted pool, a statement or a connect
// that outlasts statement_timeout -> kUnavailable. A failed
// write does not spoil the transaction (it runs under a savepoint), exactly
// as with FakeStore.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "services/core/store.h"
#include "services/store/migration.h"
#include "services/store/pool_stats.h"

namespace septa::store {

struct PgStoreOptions {
  std::string database_url{};
  int pool_size = 8;
  std::chrono::milliseconds acquire_timeout{5000};  // waiting for a free pooled connection
  // PostgreSQL's statement_timeout on every pooled connection, and libpq's
  // connect_timeout (whole seconds, at least 2) for connecting. A transaction
  // attempt holding its connection for twice this long has its connection
  // cut: the server stopped answering and cannot time the statement out.
  std::chrono::milliseconds statement_timeout{5000};
  int max_attempts = 10;                // per Transact, counting the first
  std::vector<Migration> migrations{};  // Ready() requires all of them applied
};

struct PgStoreStats {
  PoolStats pool;
  std::uint64_t retries_total = 0;  // transaction attempts lost to a race and run again
};

class ConnectionPool;
class RevocationListener;

class PgStore final : public core::Store {
 public:
  // Connects lazily: construction never fails, Ready() tells.
  explicit PgStore(PgStoreOptions options);
  ~PgStore() override;

  Status Transact(core::TxMode mode, const std::function<Status(core::Tx&)>& body) override;
  Status Ready() override;
  // LISTENs on a connection of its own (not one of the pool's).
  void WatchRevocations(std::function<void(const core::Revocation&)> on_revocation) override;

  PgStoreStats Stats() const;

 private:
  PgStoreOptions options_;
  std::unique_ptr<ConnectionPool> pool_;
  std::atomic<std::uint64_t> retries_total_{0};
  std::unique_ptr<RevocationListener> revocation_listener_;
};

}  // namespace septa::store
