#include "services/store/pg_lease_store.h"

#include "services/store/connection_pool.h"
#include "services/store/pg_errors.h"
#include "services/store/pg_values.h"

namespace septa::store {
namespace {

void PrepareLeaseStatements(pqxx::connection& c) {
  // $3 = now, $4 = now + ttl (microseconds). The tenure goes on when the
  // holder still holds the lease unexpired; anything else is a new tenure.
  c.prepare("lease_acquire",
            "INSERT INTO leases AS l (name, holder, acquire_time, expire_time) "
            "VALUES ($1, $2, septa_ts($3), septa_ts($4)) "
            "ON CONFLICT (name) DO UPDATE SET "
            "  holder = EXCLUDED.holder, expire_time = EXCLUDED.expire_time, "
            "  acquire_time = CASE WHEN l.holder = EXCLUDED.holder AND l.expire_time > EXCLUDED.acquire_time "
            "                 THEN l.acquire_time ELSE EXCLUDED.acquire_time END, "
            "  generation = l.generation + CASE WHEN l.holder = EXCLUDED.holder "
            "               AND l.expire_time > EXCLUDED.acquire_time THEN 0 ELSE 1 END, "
            "  renewals = CASE WHEN l.holder = EXCLUDED.holder AND l.expire_time > EXCLUDED.acquire_time "
            "             THEN l.renewals + 1 ELSE 0 END "
            "WHERE l.holder IS NULL OR l.holder = EXCLUDED.holder OR l.expire_time <= EXCLUDED.acquire_time "
            "RETURNING 1");
  c.prepare("lease_renew",
            "UPDATE leases SET expire_time = septa_ts($4), renewals = renewals + 1 "
            "WHERE name = $1 AND holder = $2 AND expire_time > septa_ts($3) RETURNING 1");
  c.prepare("lease_release", "UPDATE leases SET holder = NULL WHERE name = $1 AND holder = $2");
  c.prepare("lease_get",
            "SELECT name, coalesce(holder, ''), septa_micros(expire_time), generation, renewals "
            "FROM leases WHERE name = $1");
}

// Runs one statement in autocommit, once more on a fresh connection when
// the first is broken (each is safe to repeat: the holder that already won
// wins again).
Result<pqxx::result> Exec(ConnectionPool& pool, const std::function<pqxx::result(pqxx::nontransaction&)>& statement) {
  return OnPooledConnection<pqxx::result>(pool, [&](pqxx::connection& c) -> Result<pqxx::result> {
    pqxx::nontransaction tx(c);
    return statement(tx);
  });
}

}  // namespace

PgLeaseStore::PgLeaseStore(PgLeaseStoreOptions options) {
  pool_ = ConnectionPool::WithStatementTimeout(options.database_url, options.pool_size, options.acquire_timeout,
                                               options.statement_timeout, PrepareLeaseStatements);
}

PgLeaseStore::~PgLeaseStore() = default;

Result<bool> PgLeaseStore::TryAcquire(const std::string& name, const std::string& holder, TimePoint now,
                                      std::chrono::milliseconds ttl) {
  auto rows = Exec(*pool_, [&](pqxx::nontransaction& tx) {
    return tx.exec_prepared("lease_acquire", name, holder, Micros(now), Micros(now + ttl));
  });
  if (!rows.ok()) return rows.status();
  return !rows->empty();
}

Result<bool> PgLeaseStore::Renew(const std::string& name, const std::string& holder, TimePoint now,
                                 std::chrono::milliseconds ttl) {
  auto rows = Exec(*pool_, [&](pqxx::nontransaction& tx) {
    return tx.exec_prepared("lease_renew", name, holder, Micros(now), Micros(now + ttl));
  });
  if (!rows.ok()) return rows.status();
  return !rows->empty();
}

Status PgLeaseStore::Release(const std::string& name, const std::string& holder) {
  return ToStatus(
      Exec(*pool_, [&](pqxx::nontransaction& tx) { return tx.exec_prepared("lease_release", name, holder); }));
}

Result<std::optional<core::Lease>> PgLeaseStore::Get(const std::string& name) {
  auto rows = Exec(*pool_, [&](pqxx::nontransaction& tx) { return tx.exec_prepared("lease_get", name); });
  if (!rows.ok()) return rows.status();
  if (rows->empty()) return std::optional<core::Lease>();
  const pqxx::row row = (*rows)[0];
  return std::optional<core::Lease>(core::Lease{row[0].as<std::string>(), row[1].as<std::string>(),
                                                FromMicros(row[2].as<std::int64_t>()), row[3].as<std::int64_t>(),
                                                row[4].as<std::int64_t>()});
}

}  // namespace septa::store
