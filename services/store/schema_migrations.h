// The schema_migrations table, shared by MigrationRunner (which writes it)
// and PgStore::Ready (which checks it). Internal to services/store.
#pragma once

#include <pqxx/pqxx>
#include <vector>

#include "common/status.h"
#include "services/store/migration.h"

namespace septa::store {

// Compares what the database recorded with the known migrations and returns
// the ones still to apply, or kFailedPrecondition naming an applied file that
// was edited or is unknown, or a new file older than the newest applied one.
Result<std::vector<const Migration*>> PendingMigrations(pqxx::transaction_base& tx,
                                                        const std::vector<Migration>& known);

// Creates schema_migrations when missing.
void CreateSchemaMigrationsTable(pqxx::transaction_base& tx);

// Records `migration` as applied, in the transaction that applied it.
void RecordApplied(pqxx::transaction_base& tx, const Migration& migration);

}  // namespace septa::store
