#include "services/store/migration.h"

#include "services/base/file.h"
#include "services/core/crypto.h"

#include <algorithm>
#include <regex>

namespace septa::store {

Result<std::vector<Migration>> ParseMigrations(std::vector<std::pair<std::string, std::string>> files) {
  static const std::regex kFileName(R"(^([0-9]{4})_[a-z0-9_]+\.sql$)");
  std::vector<Migration> migrations;
  for (auto& [name, sql] : files) {
    std::smatch match;
    if (!std::regex_match(name, match, kFileName)) {
      return InvalidArgument("migration file name \"" + name +
                             "\" does not match NNNN_<name>.sql (lower case, digits, '_')");
    }
    Migration m;
    m.version = std::stoi(match[1]);
    m.file_name = name;
    m.checksum = core::Sha256Hex(sql);
    m.sql = std::move(sql);
    migrations.push_back(std::move(m));
  }
  std::sort(migrations.begin(), migrations.end(),
            [](const Migration& a, const Migration& b) { return a.version < b.version; });
  for (size_t i = 1; i < migrations.size(); ++i) {
    if (migrations[i].version == migrations[i - 1].version) {
      return InvalidArgument("migrations " + migrations[i - 1].file_name + " and " + migrations[i].file_name +
                             " have the same version number");
    }
  }
  return migrations;
}

Result<std::vector<Migration>> LoadMigrationsFromDirectory(const std::filesystem::path& dir) {
  std::error_code ec;
  std::filesystem::directory_iterator it(dir, ec);
  if (ec) return FailedPrecondition("cannot read the migrations directory " + dir.string() + ": " + ec.message());
  std::vector<std::pair<std::string, std::string>> files;
  for (const auto& entry : it) {
    if (!entry.is_regular_file() || entry.path().extension() != ".sql") continue;
    auto sql = base::ReadFile(entry.path());
    if (!sql.ok()) return FailedPrecondition(sql.status().message());
    files.emplace_back(entry.path().filename().string(), *std::move(sql));
  }
  return ParseMigrations(std::move(files));
}

}  // namespace septa::store
