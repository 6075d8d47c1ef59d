#include "services/store/scratch_database.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <pqxx/pqxx>

namespace septa::store {
namespace {

using ::testing::HasSubstr;

std::size_t AppliedMigrations(const std::string& url) {
  pqxx::connection connection(url);
  pqxx::work tx(connection);
  const auto count = tx.exec1("SELECT count(*) FROM schema_migrations")[0].as<std::size_t>();
  tx.commit();
  return count;
}

// One initdb for the whole life cycle: an embedded server, migrated; a second
// ScratchDatabase on its URL migrates nothing more and leaves it running;
// the first, destroyed, stops its server and removes its directory.
TEST(ScratchDatabase, EmbeddedIsMigratedAndRemovedAGivenUrlIsLeftRunning) {
  auto embedded = ScratchDatabase::Open("", "septa-scratch-test", /*durable=*/false);
  ASSERT_TRUE(embedded.ok()) << embedded.status().ToString();
  ASSERT_TRUE((*embedded)->embedded());
  const std::string url = (*embedded)->url();
  ASSERT_FALSE((*embedded)->migrations().empty());
  EXPECT_EQ(AppliedMigrations(url), (*embedded)->migrations().size());
  const auto root = std::filesystem::temp_directory_path() / ("septa-scratch-test-" + std::to_string(::getpid()));
  EXPECT_TRUE(std::filesystem::exists(root));

  {
    auto given = ScratchDatabase::Open(url, "unused", false);
    ASSERT_TRUE(given.ok()) << given.status().ToString();
    EXPECT_FALSE((*given)->embedded());
    EXPECT_EQ((*given)->url(), url);
  }
  EXPECT_EQ(AppliedMigrations(url), (*embedded)->migrations().size()) << "the given server was stopped";

  embedded->reset();
  EXPECT_FALSE(std::filesystem::exists(root));
  EXPECT_ANY_THROW(AppliedMigrations(url));
}

TEST(ScratchDatabase, AnUnreachableUrlSaysTheMigrationFailed) {
  auto db = ScratchDatabase::Open("postgresql:///septa?host=/nonexistent-septa-socket-dir", "unused", false);
  ASSERT_FALSE(db.ok());
  EXPECT_THAT(db.status().message(), HasSubstr("migrating: "));
}

}  // namespace
}  // namespace septa::store
