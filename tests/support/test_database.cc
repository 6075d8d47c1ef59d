#include "tests/support/test_database.h"

#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <random>

#include "services/store/connection_url.h"
#include "services/store/database_admin.h"
#include "services/store/migration_runner.h"

namespace septa::test {
namespace {

Result<std::string> ServerUrl() {
  if (const char* url = std::getenv("SEPTA_TEST_DATABASE_URL"); url != nullptr && *url != '\0') return std::string(url);
  const std::filesystem::path file = UrlFileOf(SEPTA_TEST_POSTGRES_DIR);
  std::ifstream in(file);
  std::string url;
  if (!(in >> url)) {
    return Unavailable("no test PostgreSQL: " + file.string() +
                       " is missing. Run the test through ctest (fixture \"postgres\"), or start one with "
                       "`septa-testdb start " SEPTA_TEST_POSTGRES_DIR "`, or set SEPTA_TEST_DATABASE_URL");
  }
  return url;
}

// Unique across the processes and threads of a parallel ctest run.
std::string FreshDatabaseName() {
  static std::atomic<int> counter{0};
  std::random_device entropy;
  char name[64];
  std::snprintf(name, sizeof name, "septa_test_%d_%d_%08x", static_cast<int>(getpid()), counter++,
                static_cast<unsigned>(entropy()));
  return name;
}

}  // namespace

std::filesystem::path UrlFileOf(const std::filesystem::path& testdb_dir) { return testdb_dir / "url"; }

Result<std::unique_ptr<TestDatabase>> TestDatabase::Create() {
  auto server_url = ServerUrl();
  if (!server_url.ok()) return server_url.status();
  const std::string name = FreshDatabaseName();
  auto url = store::WithDatabase(*server_url, name);
  if (!url.ok()) return url.status();
  SEPTA_RETURN_IF_ERROR(store::CreateDatabaseIfMissing(*server_url, name));
  return std::unique_ptr<TestDatabase>(new TestDatabase(*server_url, name, *url));
}

Result<std::unique_ptr<TestDatabase>> TestDatabase::CreateMigrated() {
  auto database = Create();
  if (!database.ok()) return database.status();
  auto migrations = store::EmbeddedMigrations();
  if (!migrations.ok()) return migrations.status();
  auto applied = store::MigrationRunner(*migrations).Apply((*database)->url());
  if (!applied.ok()) return applied.status();
  return database;
}

TestDatabase::~TestDatabase() {
  const Status dropped = store::DropDatabase(server_url_, name_);
  if (!dropped.ok()) std::fprintf(stderr, "TestDatabase: %s\n", dropped.ToString().c_str());
}

}  // namespace septa::test
