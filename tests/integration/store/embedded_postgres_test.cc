#include "services/store/embedded_postgres.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <pqxx/pqxx>

namespace septa::store {
namespace {

using ::testing::HasSubstr;
namespace fs = std::filesystem;

class EmbeddedPostgresTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // Short: the socket path below it must fit in 107 bytes.
    std::string dir = ::testing::TempDir() + "septa-epg-XXXXXX";
    ASSERT_NE(mkdtemp(dir.data()), nullptr);
    root_ = dir;
  }
  void TearDown() override {
    EXPECT_TRUE(EmbeddedPostgres::StopServer(root_).ok());
    fs::remove_all(root_);
  }
  EmbeddedPostgresOptions Options(bool durable = false) const {
    EmbeddedPostgresOptions options;
    options.root = root_;
    options.durable = durable;
    return options;
  }
  fs::path pid_file() const { return root_ / "postgres/data/postmaster.pid"; }

  fs::path root_;
};

std::string QueryOne(const std::string& url, const std::string& sql) {
  pqxx::connection connection(url);
  pqxx::work tx(connection);
  // Copied before the row, and the result it points into, is freed.
  std::string text = tx.exec1(sql)[0].c_str();
  tx.commit();
  return text;
}

// Each test pays for one initdb, so each covers one life cycle end to end.

TEST_F(EmbeddedPostgresTest, DurableServerIsPrivateUnprivilegedAndKeepsDataAcrossRestarts) {
  const auto started = std::chrono::steady_clock::now();
  auto server = EmbeddedPostgres::Start(Options(/*durable=*/true));
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  const auto cold_start = std::chrono::steady_clock::now() - started;
  std::printf("durable cold start (initdb + start + create database): %lld ms\n",
              static_cast<long long>(std::chrono::duration_cast<std::chrono::milliseconds>(cold_start).count()));
  const std::string url = (*server)->url();
  EXPECT_EQ(QueryOne(url, "SHOW fsync"), "on");
  EXPECT_EQ(QueryOne(url, "SHOW listen_addresses"), "");  // no TCP at all
  EXPECT_EQ(QueryOne(url, "SELECT current_database()"), "septa");
  EXPECT_EQ(QueryOne(url, "SELECT usesuper FROM pg_user WHERE usename = current_user"), "t");

  // As root the server runs as "postgres"; otherwise as ourselves.
  const uid_t expected_owner = geteuid() == 0 ? getpwnam("postgres")->pw_uid : geteuid();
  struct stat st {};
  ASSERT_EQ(stat((root_ / "postgres/run").c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, expected_owner);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  {
    // Keep the session open while looking at its backend: a backend exits
    // (asynchronously) when its connection closes.
    pqxx::connection session(url);
    pqxx::nontransaction tx(session);
    const std::string backend_pid = tx.exec1("SELECT pg_backend_pid()")[0].as<std::string>();
    struct stat backend {};
    ASSERT_EQ(stat(("/proc/" + backend_pid).c_str(), &backend), 0);
    EXPECT_EQ(backend.st_uid, expected_owner);
  }

  QueryOne(url, "CREATE TABLE kept AS SELECT 42 AS answer; SELECT answer FROM kept");
  ASSERT_TRUE((*server)->Stop().ok());
  EXPECT_FALSE(fs::exists(pid_file()));
  auto again = EmbeddedPostgres::Start(Options(true));
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(QueryOne((*again)->url(), "SELECT answer FROM kept"), "42");
}

TEST_F(EmbeddedPostgresTest, ThrowawayServerRunsWithoutFsyncAndStopsWithItsOwner) {
  {
    auto server = EmbeddedPostgres::Start(Options(/*durable=*/false));
    ASSERT_TRUE(server.ok()) << server.status().ToString();
    EXPECT_EQ(QueryOne((*server)->url(), "SHOW fsync"), "off");
    EXPECT_TRUE(fs::exists(pid_file()));
  }
  EXPECT_FALSE(fs::exists(pid_file()));
}

TEST_F(EmbeddedPostgresTest, RecoversFromAKilledPredecessor) {
  {
    auto first = EmbeddedPostgres::Start(Options());
    ASSERT_TRUE(first.ok()) << first.status().ToString();
    (*first)->Detach();  // as if septad were killed: the server outlives it
  }
  ASSERT_TRUE(fs::exists(pid_file()));
  {
    auto adopted = EmbeddedPostgres::Start(Options());
    ASSERT_TRUE(adopted.ok()) << adopted.status().ToString();
    EXPECT_EQ(QueryOne((*adopted)->url(), "SELECT 1"), "1");
  }
  EXPECT_FALSE(fs::exists(pid_file()));

  // A server killed with SIGKILL leaves postmaster.pid behind, and its PID
  // may belong to another live process by now (here: this test), which
  // PostgreSQL itself would take for a running postmaster.
  std::ofstream(pid_file()) << getpid() << "\n" << (root_ / "postgres/data").string() << "\n";
  auto restarted = EmbeddedPostgres::Start(Options());
  ASSERT_TRUE(restarted.ok()) << restarted.status().ToString();
  EXPECT_EQ(QueryOne((*restarted)->url(), "SELECT 1"), "1");
}

TEST_F(EmbeddedPostgresTest, MissingBinariesNameThePackageToInstall) {
  auto options = Options();
  options.bin_dir = "/nonexistent/bin";
  auto server = EmbeddedPostgres::Start(options);
  ASSERT_FALSE(server.ok());
  EXPECT_EQ(server.status().code(), Code::kFailedPrecondition);
  EXPECT_THAT(server.status().message(), HasSubstr("install the Debian packages postgresql-15"));
}

TEST_F(EmbeddedPostgresTest, RefusesADirectoryTooDeepForAUnixSocket) {
  auto options = Options();
  options.root = root_ / std::string(100, 'x');
  auto server = EmbeddedPostgres::Start(options);
  ASSERT_FALSE(server.ok());
  EXPECT_EQ(server.status().code(), Code::kInvalidArgument);
  EXPECT_THAT(server.status().message(), HasSubstr("choose a shorter --data-dir"));
}

TEST_F(EmbeddedPostgresTest, StoppingWhenNothingRunsIsOk) { EXPECT_TRUE(EmbeddedPostgres::StopServer(root_).ok()); }

}  // namespace
}  // namespace septa::store
