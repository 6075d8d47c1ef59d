// The PostgreSQL of a benchmark or another command-line tool: the server at
// the URL it was given, or else a private embedded one in a new directory
// under the system's temporary directory, stopped and removed when this is
// destroyed; migrated to the newest schema either way.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "common/status.h"
#include "services/store/embedded_postgres.h"
#include "services/store/migration.h"

namespace septa::store {

class ScratchDatabase {
 public:
  // `url` empty: an embedded server in <tmp>/<name>-<pid>, `durable` as in
  // EmbeddedPostgresOptions. Errors say which step failed.
  static Result<std::unique_ptr<ScratchDatabase>> Open(std::string url, const std::string& name, bool durable);
  ~ScratchDatabase();
  ScratchDatabase(const ScratchDatabase&) = delete;
  ScratchDatabase& operator=(const ScratchDatabase&) = delete;

  const std::string& url() const { return url_; }
  const std::vector<Migration>& migrations() const { return migrations_; }
  bool embedded() const { return postgres_ != nullptr; }

 private:
  ScratchDatabase() = default;
  std::filesystem::path root_;
  std::unique_ptr<EmbeddedPostgres> postgres_;  // null for a given URL
  std::string url_;
  std::vector<Migration> migrations_;
};

}  // namespace septa::store
