// One fresh PostgreSQL database per test, on the test run's throwaway server
// (septa-testdb, CTest fixture "postgres"), dropped when the test ends, so
// tests are isolated and may run in parallel. A test binary declared with
// septa_test(... POSTGRES) finds the server through the fixture's URL file;
// SEPTA_TEST_DATABASE_URL overrides it (any PostgreSQL 15 where the user may
// create databases).
#pragma once

#include <filesystem>
#include <memory>
#include <string>

#include "common/status.h"

namespace septa::test {

// Where septa-testdb writes the server's URL under its directory.
std::filesystem::path UrlFileOf(const std::filesystem::path& testdb_dir);

class TestDatabase {
 public:
  // An empty database; CreateMigrated also applies migrations/ (embedded).
  static Result<std::unique_ptr<TestDatabase>> Create();
  static Result<std::unique_ptr<TestDatabase>> CreateMigrated();

  ~TestDatabase();  // drops the database (sessions still open are cut)
  TestDatabase(const TestDatabase&) = delete;
  TestDatabase& operator=(const TestDatabase&) = delete;

  const std::string& url() const { return url_; }
  const std::string& name() const { return name_; }

 private:
  TestDatabase(std::string server_url, std::string name, std::string url)
      : server_url_(std::move(server_url)), name_(std::move(name)), url_(std::move(url)) {}

  std::string server_url_;
  std::string name_;
  std::string url_;
};

}  // namespace septa::test
