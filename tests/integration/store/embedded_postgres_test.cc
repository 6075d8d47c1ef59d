#include "services/store/embedded_postgres.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <pwd.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <pqxx/pqxx>
#include <thread>

#include "services/store/postgres_supervisor.h"
#include "tests/support/fake_clock.h"

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

// Issue 9 #3: a killed server comes back by itself, with its data.
TEST_F(EmbeddedPostgresTest, TheSupervisorStartsAKilledServerAgain) {
  auto server = EmbeddedPostgres::Start(Options(/*durable=*/true));
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  const std::string url = (*server)->url();
  QueryOne(url, "CREATE TABLE kept AS SELECT 42 AS answer; SELECT answer FROM kept");
  SystemClock clock;
  PostgresSupervisor supervisor(**server, clock);
  const auto killed = (*server)->RunningPostmaster();
  ASSERT_TRUE(killed.has_value());
  ASSERT_EQ(kill(*killed, SIGKILL), 0);

  std::string answer;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (answer.empty() && std::chrono::steady_clock::now() < deadline) {
    const auto now_running = (*server)->RunningPostmaster();
    if (now_running && *now_running != *killed) {
      try {
        answer = QueryOne(url, "SELECT answer FROM kept");
      } catch (const std::exception&) {
        // still starting up
      }
    }
    if (answer.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_EQ(answer, "42") << "no new server answered within 30 s";
  EXPECT_TRUE(supervisor.Health().ok());
}

// /healthz's source: a server that cannot be started again is reported once
// it has been down for give_up_after, and healthy again once it runs.
TEST_F(EmbeddedPostgresTest, TheSupervisorReportsAServerThatStaysDownUntilItRunsAgain) {
  auto server = EmbeddedPostgres::Start(Options());
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  const fs::path conf = root_ / "postgres/data/postgresql.conf";
  const std::string good_conf = [&] {
    std::ifstream in(conf);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }();
  std::ofstream(conf, std::ios::app) << "\nno_such_setting = 1\n";  // PostgreSQL refuses to start
  const auto killed = (*server)->RunningPostmaster();
  ASSERT_TRUE(killed.has_value());
  ASSERT_EQ(kill(*killed, SIGKILL), 0);
  // The server is down before the supervisor first looks, so that its first
  // look cannot race the kill (noticing an exit is the test above's).
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while ((*server)->RunningPostmaster() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_FALSE((*server)->RunningPostmaster().has_value()) << "a SIGKILLed postmaster still runs after 30 s";
  FakeClock clock;
  const std::chrono::seconds give_up_after(60);
  PostgresSupervisor supervisor(**server, clock,
                                {.first_delay = std::chrono::milliseconds(50),
                                 .max_delay = std::chrono::milliseconds(200),
                                 .give_up_after = give_up_after});

  // Injected time: each step moves the clock past give_up_after.
  while (supervisor.Health().ok() && std::chrono::steady_clock::now() < deadline) {
    clock.Advance(give_up_after + std::chrono::seconds(1));
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(supervisor.Health().code(), Code::kUnavailable);
  EXPECT_FALSE((*server)->RunningPostmaster().has_value());

  // Replaced in one rename: an attempt under way reads the bad file or the
  // good one, never a half-written one (truncated, it started a server on
  // the default port and socket directory, which never answered here).
  const fs::path fixed = conf.string() + ".fixed";
  std::ofstream(fixed) << good_conf;
  fs::rename(fixed, conf);
  // Back when it answers a query: a postmaster that runs may still be
  // starting up (seen under ThreadSanitizer on a loaded machine).
  std::string answer;
  const auto back_by = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (answer.empty() && std::chrono::steady_clock::now() < back_by) {
    try {
      if (supervisor.Health().ok() && (*server)->RunningPostmaster()) answer = QueryOne((*server)->url(), "SELECT 1");
    } catch (const std::exception&) {
      // not accepting connections yet
    }
    if (answer.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_TRUE(supervisor.Health().ok());
  EXPECT_EQ(answer, "1");
}

// A septad started while its killed predecessor's lifeline still stops the
// old server waits for it (issue 9 #2), rather than adopting it.
TEST_F(EmbeddedPostgresTest, ASecondOwnerWaitsForTheFirstToBeGone) {
  auto first = EmbeddedPostgres::Start(Options());
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  auto options = Options();
  options.start_timeout = std::chrono::seconds(1);
  auto second = EmbeddedPostgres::Start(options);
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), Code::kFailedPrecondition);
  EXPECT_THAT(second.status().message(), HasSubstr("in use by another septad"));
  ASSERT_TRUE((*first)->Stop().ok());
  auto third = EmbeddedPostgres::Start(Options());
  EXPECT_TRUE(third.ok()) << third.status().ToString();
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
