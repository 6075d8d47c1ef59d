#include "services/store/migration_runner.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <pqxx/pqxx>
#include <thread>

#include "services/core/crypto.h"
#include "tests/support/test_database.h"

namespace septa::store {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

std::vector<Migration> Migrations(std::vector<std::pair<std::string, std::string>> files) {
  auto parsed = ParseMigrations(std::move(files));
  EXPECT_TRUE(parsed.ok()) << parsed.status().ToString();
  return parsed.ok() ? *parsed : std::vector<Migration>{};
}

pqxx::result Query(const std::string& url, const std::string& sql) {
  pqxx::connection connection(url);
  pqxx::read_transaction tx(connection);
  return tx.exec(sql);
}

class MigrationRunnerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto database = test::TestDatabase::Create();
    ASSERT_TRUE(database.ok()) << database.status().ToString();
    database_ = std::move(*database);
  }
  const std::string& url() const { return database_->url(); }

  std::unique_ptr<test::TestDatabase> database_;
};

TEST_F(MigrationRunnerTest, FreshDatabaseGetsEveryMigrationInOrder) {
  auto embedded = EmbeddedMigrations();
  ASSERT_TRUE(embedded.ok()) << embedded.status().ToString();
  auto report = MigrationRunner(*embedded).Apply(url());
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  ASSERT_FALSE(embedded->empty());
  EXPECT_EQ(report->applied.front(), "0001_init.sql");
  EXPECT_EQ(report->applied.size(), embedded->size());
  EXPECT_EQ(report->already_applied, 0);

  const auto recorded = Query(url(), "SELECT version, file_name, checksum FROM schema_migrations ORDER BY version");
  ASSERT_EQ(recorded.size(), embedded->size());
  for (size_t i = 0; i < recorded.size(); ++i) {
    EXPECT_EQ(recorded[i][0].as<int>(), (*embedded)[i].version);
    EXPECT_EQ(recorded[i][1].as<std::string>(), (*embedded)[i].file_name);
    EXPECT_EQ(recorded[i][2].as<std::string>(), core::Sha256Hex((*embedded)[i].sql));
  }
  EXPECT_EQ(Query(url(), "SELECT 1 FROM pg_extension WHERE extname = 'btree_gist'").size(), 1u);
}

TEST_F(MigrationRunnerTest, SeedsTheFourDefaultTrustTiers) {
  auto embedded = EmbeddedMigrations();
  ASSERT_TRUE(embedded.ok());
  ASSERT_TRUE(MigrationRunner(*embedded).Apply(url()).ok());
  const auto tiers = Query(url(),
                           "SELECT name, gpu_sharing, runtime_class, credential_ttl_max_seconds "
                           "FROM trust_tiers ORDER BY credential_ttl_max_seconds DESC");
  std::vector<std::string> rows;
  for (const auto& t : tiers) {
    rows.push_back(t[0].as<std::string>() + " " + t[1].as<std::string>() + " " + t[2].as<std::string>() + " " +
                   t[3].as<std::string>());
  }
  EXPECT_THAT(rows, ElementsAre("shared fractional nvidia 86400", "isolated mig nvidia 28800",
                                "dedicated whole-gpu kata-qemu-nvidia-gpu 3600",
                                "exclusive whole-node kata-qemu-nvidia-gpu 900"));
}

TEST_F(MigrationRunnerTest, SecondRunIsANoOp) {
  const auto migrations =
      Migrations({{"0001_a.sql", "CREATE TABLE a (x int);"}, {"0002_b.sql", "CREATE TABLE b (x int);"}});
  MigrationRunner runner(migrations);
  ASSERT_TRUE(runner.Apply(url()).ok());
  auto again = runner.Apply(url());
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_THAT(again->applied, IsEmpty());
  EXPECT_EQ(again->already_applied, 2);
}

TEST_F(MigrationRunnerTest, AppliesOnlyTheNewMigrations) {
  ASSERT_TRUE(MigrationRunner(Migrations({{"0001_a.sql", "CREATE TABLE a (x int);"}})).Apply(url()).ok());
  auto report = MigrationRunner(
                    Migrations({{"0001_a.sql", "CREATE TABLE a (x int);"}, {"0002_b.sql", "CREATE TABLE b (x int);"}}))
                    .Apply(url());
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_THAT(report->applied, ElementsAre("0002_b.sql"));
  EXPECT_EQ(report->already_applied, 1);
}

TEST_F(MigrationRunnerTest, RefusesAnAppliedFileThatChanged) {
  ASSERT_TRUE(MigrationRunner(Migrations({{"0001_a.sql", "CREATE TABLE a (x int);"}})).Apply(url()).ok());
  auto report = MigrationRunner(Migrations({{"0001_a.sql", "CREATE TABLE a (x bigint);"}})).Apply(url());
  ASSERT_FALSE(report.ok());
  EXPECT_EQ(report.status().code(), Code::kFailedPrecondition);
  EXPECT_THAT(report.status().message(), HasSubstr("migration 0001_a.sql changed after it was applied"));
}

TEST_F(MigrationRunnerTest, RefusesWhenAnAppliedFileIsMissing) {
  ASSERT_TRUE(MigrationRunner(
                  Migrations({{"0001_a.sql", "CREATE TABLE a (x int);"}, {"0002_b.sql", "CREATE TABLE b (x int);"}}))
                  .Apply(url())
                  .ok());
  auto report = MigrationRunner(Migrations({{"0001_a.sql", "CREATE TABLE a (x int);"}})).Apply(url());
  ASSERT_FALSE(report.ok());
  EXPECT_EQ(report.status().code(), Code::kFailedPrecondition);
  EXPECT_THAT(report.status().message(), HasSubstr("migration 0002_b.sql is applied to the database but missing"));
}

TEST_F(MigrationRunnerTest, RefusesANewFileNumberedBelowTheNewestApplied) {
  ASSERT_TRUE(MigrationRunner(Migrations({{"0002_b.sql", "CREATE TABLE b (x int);"}})).Apply(url()).ok());
  auto report = MigrationRunner(
                    Migrations({{"0001_a.sql", "CREATE TABLE a (x int);"}, {"0002_b.sql", "CREATE TABLE b (x int);"}}))
                    .Apply(url());
  ASSERT_FALSE(report.ok());
  EXPECT_THAT(report.status().message(), HasSubstr("0001_a.sql is new but numbered below"));
}

TEST_F(MigrationRunnerTest, AFailingMigrationIsRolledBackAndNamed) {
  auto report = MigrationRunner(Migrations({{"0001_a.sql", "CREATE TABLE a (x int);"},
                                            {"0002_b.sql", "CREATE TABLE b (x int); SELECT no_such_column FROM b;"}}))
                    .Apply(url());
  ASSERT_FALSE(report.ok());
  EXPECT_EQ(report.status().code(), Code::kFailedPrecondition);
  EXPECT_THAT(report.status().message(), HasSubstr("migration 0002_b.sql failed and was rolled back"));
  EXPECT_EQ(Query(url(), "SELECT version FROM schema_migrations").size(), 1u);
  EXPECT_TRUE(Query(url(), "SELECT to_regclass('b')")[0][0].is_null());
  EXPECT_FALSE(Query(url(), "SELECT to_regclass('a')")[0][0].is_null());
}

// migrations/0016 on a database where the old name function already gave
// two virtual clusters one host namespace (finding M2): which keeps it is the
// operator's choice, so it refuses, naming both, and changes nothing; the
// earlier rows' on_host follows their recorded namespace.
TEST_F(MigrationRunnerTest, TheUniqueHostNamespaceMigrationNamesVirtualClustersThatShareOne) {
  auto embedded = EmbeddedMigrations();
  ASSERT_TRUE(embedded.ok());
  std::vector<Migration> before, all = *embedded;
  auto unique = std::find_if(all.begin(), all.end(),
                             [](const Migration& m) { return m.file_name.ends_with("_host_namespace_unique.sql"); });
  ASSERT_NE(unique, all.end());
  for (const Migration& m : all) {
    if (m.version < unique->version) before.push_back(m);
  }
  ASSERT_TRUE(MigrationRunner(before).Apply(url()).ok());
  auto exec = [&](const std::string& sql) {
    pqxx::connection connection(url());
    pqxx::work tx(connection);
    tx.exec(sql);
    tx.commit();
  };
  const std::string shared = "septa-longtenantname-abcdefghij-x-firstvcluster-abcd-49ffa608db";
  exec(
      "INSERT INTO tenants (name, trust_tier, state, version, create_time, update_time)"
      " VALUES ('longtenantname-abcdefghij', 'shared', 'active', 1, now(), now())");
  auto vcluster = [&](const std::string& name, const std::string& host_namespace) {
    exec(
        "INSERT INTO virtual_clusters (tenant, name, capacity_tier, capacity, quota_cpu_milli, quota_memory_mib,"
        " quota_pods, queue_priority, queue_over_quota_weight, state, host_namespace, generation, version,"
        " create_time, update_time) VALUES ('longtenantname-abcdefghij', '" +
        name + "', 'shared', '{}', 0, 0, 0, 100, 1, 'READY', '" + host_namespace + "', 1, 1, now(), now())");
  };
  vcluster("firstvcluster-abcdefghijklmnopq", shared);
  vcluster("firstvcluster-abcd-49ffa608db", shared);
  vcluster("other", "septa-longtenantname-abcdefghij-x-other");
  vcluster("new", "");
  auto refused = MigrationRunner(all).Apply(url());
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), Code::kFailedPrecondition);
  EXPECT_THAT(refused.status().message(), HasSubstr("migration " + unique->file_name + " failed"));
  EXPECT_THAT(refused.status().message(),
              HasSubstr(shared + " is the host namespace of longtenantname-abcdefghij/firstvcluster-abcd-49ffa608db "
                                 "and longtenantname-abcdefghij/firstvcluster-abcdefghijklmnopq"));
  EXPECT_THAT(refused.status().message(), ::testing::Not(HasSubstr("-x-other")));
  EXPECT_TRUE(
      Query(url(), "SELECT 1 FROM schema_migrations WHERE version = " + std::to_string(unique->version)).empty());

  // The operator deletes one: the migration passes.
  exec("DELETE FROM virtual_clusters WHERE name = 'firstvcluster-abcd-49ffa608db'");
  auto applied = MigrationRunner(all).Apply(url());
  ASSERT_TRUE(applied.ok()) << applied.status().ToString();
  const auto rows = Query(url(), "SELECT name, on_host FROM virtual_clusters ORDER BY name");
  std::vector<std::string> on_host;
  for (const auto& row : rows) on_host.push_back(row[0].as<std::string>() + " " + row[1].as<std::string>());
  EXPECT_THAT(on_host, ElementsAre("firstvcluster-abcdefghijklmnopq t", "new f", "other t"));
}

TEST_F(MigrationRunnerTest, ConcurrentRunnersApplyEachMigrationExactlyOnce) {
  // Not idempotent on purpose (a second CREATE TABLE or INSERT would fail or
  // double count), and slow enough that the runners overlap.
  const auto migrations = Migrations({{"0001_a.sql", "CREATE TABLE a (n int); SELECT pg_sleep(0.2);"},
                                      {"0002_b.sql", "INSERT INTO a VALUES (1); SELECT pg_sleep(0.1);"}});
  constexpr int kRunners = 6;
  std::vector<Result<MigrationReport>> reports(kRunners, Status(Code::kUnknown, "not run"));
  std::vector<std::thread> threads;
  for (int i = 0; i < kRunners; ++i) {
    threads.emplace_back([&, i] { reports[i] = MigrationRunner(migrations).Apply(url()); });
  }
  for (auto& t : threads) t.join();
  size_t applied = 0;
  for (const auto& r : reports) {
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    applied += r->applied.size();
  }
  EXPECT_EQ(applied, 2u);
  EXPECT_EQ(Query(url(), "SELECT count(*) FROM a")[0][0].as<int>(), 1);
  EXPECT_EQ(Query(url(), "SELECT count(*) FROM schema_migrations")[0][0].as<int>(), 2);
}

TEST_F(MigrationRunnerTest, CheckReportsPendingThenOk) {
  const auto migrations = Migrations({{"0001_a.sql", "CREATE TABLE a (x int);"}});
  MigrationRunner runner(migrations);
  const Status before = runner.Check(url());
  EXPECT_EQ(before.code(), Code::kFailedPrecondition);
  EXPECT_THAT(before.message(), HasSubstr("0001_a.sql is not applied yet"));
  ASSERT_TRUE(runner.Apply(url()).ok());
  EXPECT_TRUE(runner.Check(url()).ok());
}

TEST(MigrationRunnerUnreachable, ReportsUnavailable) {
  auto report = MigrationRunner({}).Apply("postgresql:///nothing?host=%2Fnonexistent&user=septa");
  ASSERT_FALSE(report.ok());
  EXPECT_EQ(report.status().code(), Code::kUnavailable);
}

TEST(MigrationFiles, TheRepositoryFolderIsWhatTheBinaryEmbeds) {
  auto from_dir = LoadMigrationsFromDirectory(SEPTA_SOURCE_DIR "/migrations");
  auto embedded = EmbeddedMigrations();
  ASSERT_TRUE(from_dir.ok()) << from_dir.status().ToString();
  ASSERT_TRUE(embedded.ok()) << embedded.status().ToString();
  ASSERT_EQ(from_dir->size(), embedded->size());
  for (size_t i = 0; i < embedded->size(); ++i) {
    EXPECT_EQ((*from_dir)[i].file_name, (*embedded)[i].file_name);
    EXPECT_EQ((*from_dir)[i].checksum, (*embedded)[i].checksum);
  }
}

TEST(MigrationFiles, RejectsBadNamesAndDuplicateVersions) {
  auto bad_name = ParseMigrations({{"1_init.sql", ""}});
  EXPECT_EQ(bad_name.status().code(), Code::kInvalidArgument);
  EXPECT_THAT(bad_name.status().message(), HasSubstr("1_init.sql"));
  auto duplicate = ParseMigrations({{"0001_a.sql", ""}, {"0001_b.sql", ""}});
  EXPECT_EQ(duplicate.status().code(), Code::kInvalidArgument);
  EXPECT_THAT(duplicate.status().message(), HasSubstr("same version"));
}

TEST(MigrationFiles, SortsByVersion) {
  auto parsed = ParseMigrations({{"0010_c.sql", "c"}, {"0002_b.sql", "b"}});
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ((*parsed)[0].file_name, "0002_b.sql");
  EXPECT_EQ((*parsed)[1].version, 10);
  EXPECT_EQ((*parsed)[1].checksum, core::Sha256Hex("c"));
}

}  // namespace
}  // namespace septa::store
