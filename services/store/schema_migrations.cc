#include "services/store/schema_migrations.h"

#include <map>

namespace septa::store {

void CreateSchemaMigrationsTable(pqxx::transaction_base& tx) {
  tx.exec(
      "CREATE TABLE IF NOT EXISTS schema_migrations ("
      "  version    integer PRIMARY KEY,"
      "  file_name  text NOT NULL,"
      "  checksum   text NOT NULL,"
      "  applied_at timestamptz NOT NULL DEFAULT now())");
}

void RecordApplied(pqxx::transaction_base& tx, const Migration& migration) {
  tx.exec_params("INSERT INTO schema_migrations (version, file_name, checksum) VALUES ($1, $2, $3)", migration.version,
                 migration.file_name, migration.checksum);
}

Result<std::vector<const Migration*>> PendingMigrations(pqxx::transaction_base& tx,
                                                        const std::vector<Migration>& known) {
  std::map<int, const Migration*> by_version;
  for (const auto& m : known) by_version[m.version] = &m;

  int newest_applied = 0;
  std::map<int, bool> applied;
  const bool table_exists = !tx.exec("SELECT to_regclass('schema_migrations')")[0][0].is_null();
  if (table_exists) {
    for (const auto& row : tx.exec("SELECT version, file_name, checksum FROM schema_migrations ORDER BY version")) {
      const int version = row[0].as<int>();
      const std::string file_name = row[1].as<std::string>();
      const std::string checksum = row[2].as<std::string>();
      const auto it = by_version.find(version);
      if (it == by_version.end()) {
        return FailedPrecondition("migration " + file_name +
                                  " is applied to the database but missing from this septad's migrations; "
                                  "the database belongs to a newer septad or the file was deleted");
      }
      if (it->second->file_name != file_name || it->second->checksum != checksum) {
        return FailedPrecondition("migration " + it->second->file_name + " changed after it was applied (as " +
                                  file_name + ", sha256 " + checksum + "; now sha256 " + it->second->checksum +
                                  "); applied migrations are immutable: restore the file and add a new one");
      }
      applied[version] = true;
      newest_applied = version;
    }
  }
  std::vector<const Migration*> pending;
  for (const auto& m : known) {
    if (applied.count(m.version)) continue;
    if (m.version < newest_applied) {
      return FailedPrecondition("migration " + m.file_name + " is new but numbered below the newest applied one (" +
                                std::to_string(newest_applied) + "); renumber it after the last migration");
    }
    pending.push_back(&m);
  }
  return pending;
}

}  // namespace septa::store
