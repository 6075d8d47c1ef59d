#include "services/store/migration_runner.h"

#include <pqxx/pqxx>

#include <spdlog/spdlog.h>

#include "services/store/connection_url.h"
#include "services/store/schema_migrations.h"

namespace septa::store {
namespace {

// pg_advisory_lock key shared by every septad: "septa" as ASCII, then "mig".
constexpr long long kMigrationLockKey = 0x7365707461'6d6967LL;

// Runs one lock function ("pg_advisory_lock" / "pg_advisory_unlock") on the
// session, outside any transaction.
void AdvisoryLockCall(pqxx::connection& connection, const char* function) {
  pqxx::nontransaction session(connection);
  session.exec_params(std::string("SELECT ") + function + "($1)", kMigrationLockKey);
  session.commit();
}

Status Unreachable(const std::string& url, const std::exception& e) {
  return Unavailable("cannot reach PostgreSQL at " + RedactPassword(url) + ": " + e.what());
}

}  // namespace

MigrationRunner::MigrationRunner(std::vector<Migration> migrations) : migrations_(std::move(migrations)) {}

Result<MigrationReport> MigrationRunner::Apply(const std::string& database_url) const {
  std::unique_ptr<pqxx::connection> connection;
  try {
    connection = std::make_unique<pqxx::connection>(database_url);
  } catch (const std::exception& e) {
    return Unreachable(database_url, e);
  }
  const Migration* current = nullptr;
  try {
    // Session-level lock: held across the per-migration transactions below,
    // released explicitly or when the connection closes.
    AdvisoryLockCall(*connection, "pg_advisory_lock");
    std::vector<const Migration*> pending;
    {
      pqxx::work tx(*connection);
      CreateSchemaMigrationsTable(tx);
      auto found = PendingMigrations(tx, migrations_);
      if (!found.ok()) return found.status();
      pending = std::move(found).value();
      tx.commit();
    }
    MigrationReport report;
    report.already_applied = static_cast<int>(migrations_.size() - pending.size());
    for (const Migration* m : pending) {
      current = m;
      pqxx::work tx(*connection);
      tx.exec(m->sql);
      RecordApplied(tx, *m);
      tx.commit();
      spdlog::info("migration {} applied", m->file_name);
      report.applied.push_back(m->file_name);
    }
    AdvisoryLockCall(*connection, "pg_advisory_unlock");
    return report;
  } catch (const pqxx::broken_connection& e) {
    return Unreachable(database_url, e);
  } catch (const std::exception& e) {
    if (current == nullptr) return Unavailable(std::string("migrations: ") + e.what());
    return FailedPrecondition("migration " + current->file_name + " failed and was rolled back: " + e.what());
  }
}

Status MigrationRunner::Check(const std::string& database_url) const {
  try {
    pqxx::connection connection(database_url);
    pqxx::read_transaction tx(connection);
    auto pending = PendingMigrations(tx, migrations_);
    if (!pending.ok()) return pending.status();
    if (!pending->empty()) {
      return FailedPrecondition("migration " + pending->front()->file_name + " is not applied yet");
    }
    return Status::Ok();
  } catch (const std::exception& e) {
    return Unreachable(database_url, e);
  }
}

}  // namespace septa::store
