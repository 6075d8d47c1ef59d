// Brings a database's schema up to date at start-up.
//
//   auto migrations = store::EmbeddedMigrations();          // or LoadMigrationsFromDirectory
//   store::MigrationRunner runner(*migrations);
//   auto report = runner.Apply(database_url);               // before serving
//
// Each pending migration runs in its own transaction together with its row in
// schema_migrations (version, file name, SHA-256, applied_at). Runners on
// several septads serialise on a PostgreSQL advisory lock, so every migration
// is applied exactly once. Apply refuses, naming the file, when an applied
// migration was edited or is missing from this binary's set.
#pragma once

#include <string>
#include <vector>

#include "common/status.h"
#include "services/store/migration.h"

namespace septa::store {

struct MigrationReport {
  std::vector<std::string> applied;  // file names applied by this call, in order
  int already_applied = 0;
};

class MigrationRunner {
 public:
  // `migrations` as returned by ParseMigrations (sorted, unique versions).
  explicit MigrationRunner(std::vector<Migration> migrations);

  // Errors: kFailedPrecondition for an edited, missing or out-of-order
  // migration and for SQL that fails (the message names the file);
  // kUnavailable when the database cannot be reached.
  Result<MigrationReport> Apply(const std::string& database_url) const;

  // OK iff every migration is applied, unchanged, and nothing unknown is.
  Status Check(const std::string& database_url) const;

  const std::vector<Migration>& migrations() const { return migrations_; }

 private:
  std::vector<Migration> migrations_;
};

}  // namespace septa::store
