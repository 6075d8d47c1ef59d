// PgStore behaviour beyond the Store contract: retries of lost races, the
// connection pool, error translation at the edges, and the database's own
// constraints.
#include "services/store/pg_store.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <future>
#include <pqxx/pqxx>
#include <thread>

#include "services/core/deadline.h"
#include "tests/support/test_database.h"

namespace septa::store {
namespace {

using ::testing::HasSubstr;

core::Tenant Tenant(const std::string& name) {
  core::Tenant t;
  t.name = name;
  t.trust_tier = "shared";
  t.version = 1;
  return t;
}

void Exec(const std::string& url, const std::string& sql) {
  pqxx::connection connection(url);
  pqxx::work tx(connection);
  tx.exec(sql);
  tx.commit();
}

// Runs a transaction on another thread that keeps its connection until
// `release` is ready; returns once it holds it.
std::thread HoldTheOnlyConnection(PgStore& store, std::future<void> release) {
  std::promise<void> holding;
  std::future<void> held = holding.get_future();
  std::thread holder([&store, holding = std::move(holding), release = std::move(release)]() mutable {
    EXPECT_TRUE(store
                    .Transact(core::TxMode::kReadOnly,
                              [&](core::Tx&) {
                                holding.set_value();
                                release.wait();
                                return Status::Ok();
                              })
                    .ok());
  });
  held.wait();
  return holder;
}

class PgStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto database = test::TestDatabase::CreateMigrated();
    ASSERT_TRUE(database.ok()) << database.status().ToString();
    database_ = std::move(*database);
    auto migrations = EmbeddedMigrations();
    ASSERT_TRUE(migrations.ok());
    migrations_ = *migrations;
  }
  PgStoreOptions Options() const { return {.database_url = database_->url(), .migrations = migrations_}; }
  const std::string& url() const { return database_->url(); }

  // Bumps the tenant's version from another connection, as a concurrent request would.
  void UpdateElsewhere(const std::string& name) {
    PgStore other(Options());
    const Status st = other.Transact(core::TxMode::kReadWrite, [&](core::Tx& tx) {
      auto t = tx.Tenants().Get(name);
      SEPTA_RETURN_IF_ERROR(t);
      core::Tenant next = *t;
      next.labels["by"] = "elsewhere";
      next.version = t->version + 1;
      return tx.Tenants().Update(next, t->version);
    });
    ASSERT_TRUE(st.ok()) << st.ToString();
  }

  // Reads the tenant, lets UpdateElsewhere commit on the attempts listed, then writes.
  Status ReadInterfereWrite(PgStore& store, int interfere_on_attempts, int& attempts) {
    return store.Transact(core::TxMode::kReadWrite, [&](core::Tx& tx) {
      ++attempts;
      auto t = tx.Tenants().Get("acme");
      SEPTA_RETURN_IF_ERROR(t);
      if (attempts <= interfere_on_attempts) UpdateElsewhere("acme");
      core::Tenant next = *t;
      next.labels["by"] = "us";
      next.display_name = "written by us";
      next.version = t->version + 1;
      return tx.Tenants().Update(next, t->version);
    });
  }

  std::unique_ptr<test::TestDatabase> database_;
  std::vector<Migration> migrations_;
};

TEST_F(PgStoreTest, ALostRaceIsRetriedWithTheBodyRunAgain) {
  PgStore store(Options());
  ASSERT_TRUE(
      store.Transact(core::TxMode::kReadWrite, [](core::Tx& tx) { return tx.Tenants().Insert(Tenant("acme")); }).ok());
  int attempts = 0;
  const Status st = ReadInterfereWrite(store, /*interfere_on_attempts=*/1, attempts);
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(attempts, 2);
  EXPECT_EQ(store.Stats().retries_total, 1u);
  core::Tenant final_state;
  ASSERT_TRUE(store
                  .Transact(core::TxMode::kReadOnly,
                            [&](core::Tx& tx) {
                              auto t = tx.Tenants().Get("acme");
                              SEPTA_RETURN_IF_ERROR(t);
                              final_state = *t;
                              return Status::Ok();
                            })
                  .ok());
  EXPECT_EQ(final_state.version, 3);  // 1, then elsewhere's 2, then ours
  EXPECT_EQ(final_state.display_name, "written by us");
}

// A read-only body runs first in autocommit; when it reads a second time it
// is run again inside a snapshot: both reads then see the same state even if
// another transaction commits between them.
TEST_F(PgStoreTest, MultiReadBodiesSeeOneSnapshot) {
  PgStore store(Options());
  ASSERT_TRUE(
      store.Transact(core::TxMode::kReadWrite, [](core::Tx& tx) { return tx.Tenants().Insert(Tenant("acme")); }).ok());
  int runs = 0;
  std::string first, second;
  const Status st = store.Transact(core::TxMode::kReadOnly, [&](core::Tx& tx) -> Status {
    ++runs;
    auto before = tx.Tenants().Get("acme");
    SEPTA_RETURN_IF_ERROR(before);
    if (runs == 2) UpdateElsewhere("acme");  // commits between the two reads of the snapshot run
    auto after = tx.Tenants().Get("acme");
    SEPTA_RETURN_IF_ERROR(after);
    first = before->labels.contains("by") ? before->labels.at("by") : "";
    second = after->labels.contains("by") ? after->labels.at("by") : "";
    return Status::Ok();
  });
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(runs, 2);  // the single-read attempt gave way at its second read
  EXPECT_EQ(first, second);
  EXPECT_EQ(store.Stats().retries_total, 0u);  // not a lost race
  // A single read needs one run.
  runs = 0;
  ASSERT_TRUE(store
                  .Transact(core::TxMode::kReadOnly,
                            [&](core::Tx& tx) -> Status {
                              ++runs;
                              return tx.Tenants().Get("acme").status();
                            })
                  .ok());
  EXPECT_EQ(runs, 1);
}

TEST_F(PgStoreTest, RetriesAreBounded) {
  PgStoreOptions options = Options();
  options.max_attempts = 3;
  PgStore store(options);
  ASSERT_TRUE(
      store.Transact(core::TxMode::kReadWrite, [](core::Tx& tx) { return tx.Tenants().Insert(Tenant("acme")); }).ok());
  int attempts = 0;
  const Status st = ReadInterfereWrite(store, /*interfere_on_attempts=*/100, attempts);
  EXPECT_EQ(st.code(), Code::kAborted);
  EXPECT_THAT(st.message(), HasSubstr("lost 3 races in a row"));
  EXPECT_EQ(attempts, 3);
}

TEST_F(PgStoreTest, TheDatabaseRejectsBadRowsEvenWithoutTheApplication) {
  EXPECT_THROW(Exec(url(),
                    "INSERT INTO tenants (name, trust_tier, state, create_time, update_time, version)"
                    " VALUES ('Bad_Name', 'shared', 'active', now(), now(), 1)"),
               pqxx::check_violation);
  EXPECT_THROW(Exec(url(),
                    "INSERT INTO tenants (name, trust_tier, state, create_time, update_time, version)"
                    " VALUES ('" +
                        std::string(41, 'a') + "', 'shared', 'active', now(), now(), 1)"),
               pqxx::check_violation);
  EXPECT_THROW(Exec(url(),
                    "INSERT INTO tenants (name, trust_tier, state, create_time, update_time, version)"
                    " VALUES ('acme', 'gold', 'active', now(), now(), 1)"),
               pqxx::foreign_key_violation);
  EXPECT_THROW(Exec(url(),
                    "INSERT INTO api_tokens (id, principal, role, secret_hash, create_time)"
                    " VALUES ('0123abcd', 'admin', 'owner', 'plain-text-secret', now())"),
               pqxx::check_violation);
  EXPECT_THROW(Exec(url(), "UPDATE trust_tiers SET credential_ttl_max_seconds = 0 WHERE name = 'shared'"),
               pqxx::check_violation);
  EXPECT_NO_THROW(Exec(url(),
                       "INSERT INTO tenants (name, trust_tier, state, create_time, update_time, version)"
                       " VALUES ('acme', 'shared', 'active', now(), now(), 1)"));
  EXPECT_THROW(Exec(url(), "DELETE FROM trust_tiers WHERE name = 'shared'"), pqxx::foreign_key_violation);
}

TEST_F(PgStoreTest, PoolAcquireWaitsForAFreeConnection) {
  PgStoreOptions options = Options();
  options.pool_size = 1;
  PgStore store(options);
  std::promise<void> release;
  std::thread holder = HoldTheOnlyConnection(store, release.get_future());
  auto waiter = std::async(std::launch::async, [&] {
    return store.Transact(core::TxMode::kReadOnly, [](core::Tx& tx) { return ToStatus(tx.TrustTiers().List()); });
  });
  while (store.Stats().pool.waits_total == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  EXPECT_EQ(store.Stats().pool.in_use, 1);
  release.set_value();
  holder.join();
  EXPECT_TRUE(waiter.get().ok());
  const PoolStats stats = store.Stats().pool;
  EXPECT_EQ(stats.max_size, 1);
  EXPECT_EQ(stats.in_use, 0);
  EXPECT_EQ(stats.idle, 1);
  EXPECT_EQ(stats.opened_total, 1u);
  EXPECT_EQ(stats.wait_timeouts_total, 0u);
}

TEST_F(PgStoreTest, PoolAcquireGivesUpAfterItsTimeout) {
  PgStoreOptions options = Options();
  options.pool_size = 1;
  options.acquire_timeout = std::chrono::milliseconds(100);
  PgStore store(options);
  std::promise<void> release;
  std::thread holder = HoldTheOnlyConnection(store, release.get_future());
  const Status st = store.Transact(core::TxMode::kReadOnly, [](core::Tx&) { return Status::Ok(); });
  release.set_value();
  holder.join();
  EXPECT_EQ(st.code(), Code::kUnavailable);
  EXPECT_THAT(st.message(), HasSubstr("all 1 database connections stayed busy for 100 ms"));
  EXPECT_EQ(store.Stats().pool.wait_timeouts_total, 1u);
}

TEST_F(PgStoreTest, ABrokenConnectionIsReplaced) {
  PgStoreOptions options = Options();
  options.pool_size = 1;
  PgStore store(options);
  auto list_tiers = [](core::Tx& tx) { return ToStatus(tx.TrustTiers().List()); };
  ASSERT_TRUE(store.Transact(core::TxMode::kReadOnly, list_tiers).ok());
  Exec(url(),
       "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
       " WHERE datname = current_database() AND pid <> pg_backend_pid()");
  const Status st = store.Transact(core::TxMode::kReadOnly, list_tiers);
  EXPECT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(store.Stats().pool.discarded_total, 1u);
  EXPECT_EQ(store.Stats().pool.opened_total, 2u);
}

// Issue 9 #10: a backend that stops answering altogether (SIGSTOP) cannot
// enforce statement_timeout itself; the pool cuts its connection instead of
// letting the request hang. (Only this test's own idle backend is stopped.)
TEST_F(PgStoreTest, AFrozenBackendIsCutOffInsteadOfHangingTheRequest) {
  PgStoreOptions options = Options();
  options.pool_size = 1;
  options.statement_timeout = std::chrono::milliseconds(300);
  PgStore store(options);
  auto list_tiers = [](core::Tx& tx) { return ToStatus(tx.TrustTiers().List()); };
  ASSERT_TRUE(store.Transact(core::TxMode::kReadOnly, list_tiers).ok());
  pqxx::connection observer(url());
  pqxx::nontransaction query(observer);
  const pid_t backend =
      query
          .exec1(
              "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()"
              " AND backend_type = 'client backend'")[0]
          .as<int>();
  ASSERT_EQ(kill(backend, SIGSTOP), 0);
  std::promise<void> done;
  std::thread thaw([&] {  // a safety net should the request hang: the test then fails on time
    done.get_future().wait_for(std::chrono::seconds(10));
    kill(backend, SIGCONT);
  });
  const auto started = std::chrono::steady_clock::now();
  const Status st = store.Transact(core::TxMode::kReadOnly, list_tiers);
  const auto took = std::chrono::steady_clock::now() - started;
  done.set_value();
  thaw.join();
  EXPECT_LT(took, std::chrono::seconds(3));
  EXPECT_TRUE(st.ok() || st.code() == Code::kUnavailable) << st.ToString();
}

// Issue 28 "Also": inside a request's deadline (core::DeadlineScope) a
// frozen backend costs the request its deadline, not twice the statement
// timeout: the lease is cut at the deadline and no attempt follows it.
TEST_F(PgStoreTest, ARequestsDeadlineEndsTheWaitOnAFrozenBackend) {
  PgStoreOptions options = Options();
  options.pool_size = 1;
  options.statement_timeout = std::chrono::seconds(5);  // a cut only after 10 s
  PgStore store(options);
  auto list_tiers = [](core::Tx& tx) { return ToStatus(tx.TrustTiers().List()); };
  ASSERT_TRUE(store.Transact(core::TxMode::kReadOnly, list_tiers).ok());
  pqxx::connection observer(url());
  pqxx::nontransaction query(observer);
  const pid_t backend =
      query
          .exec1(
              "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()"
              " AND backend_type = 'client backend'")[0]
          .as<int>();
  ASSERT_EQ(kill(backend, SIGSTOP), 0);
  std::promise<void> done;
  std::thread thaw([&] {  // a safety net should the request hang: the test then fails on time
    done.get_future().wait_for(std::chrono::seconds(15));
    kill(backend, SIGCONT);
  });
  const auto started = std::chrono::steady_clock::now();
  Status st;
  {
    core::DeadlineScope deadline(std::chrono::milliseconds(300));
    st = store.Transact(core::TxMode::kReadOnly, list_tiers);
  }
  const auto took = std::chrono::steady_clock::now() - started;
  done.set_value();
  thaw.join();
  EXPECT_EQ(st.code(), Code::kUnavailable) << st.ToString();
  EXPECT_GE(took, std::chrono::milliseconds(300));
  EXPECT_LT(took, std::chrono::milliseconds(1300));
  EXPECT_EQ(store.Stats().pool.cut_total, 1u);
  // Outside any scope the store's own bounds hold, as before.
  EXPECT_TRUE(store.Transact(core::TxMode::kReadOnly, list_tiers).ok());
}

TEST_F(PgStoreTest, AThrowingBodyIsAnInternalErrorAndChangesNothing) {
  PgStore store(Options());
  const Status st = store.Transact(core::TxMode::kReadWrite, [](core::Tx& tx) -> Status {
    EXPECT_TRUE(tx.Tenants().Insert(Tenant("acme")).ok());
    throw std::runtime_error("bug in a use case");
  });
  EXPECT_EQ(st.code(), Code::kInternal);
  EXPECT_THAT(st.message(), HasSubstr("bug in a use case"));
  const Status read = store.Transact(core::TxMode::kReadOnly, [](core::Tx& tx) {
    EXPECT_EQ(tx.Tenants().Get("acme").status().code(), Code::kNotFound);
    return Status::Ok();
  });
  EXPECT_TRUE(read.ok()) << read.ToString();
}

TEST_F(PgStoreTest, ReadyRequiresEveryMigration) {
  auto empty = test::TestDatabase::Create();
  ASSERT_TRUE(empty.ok()) << empty.status().ToString();
  PgStoreOptions options = Options();
  options.database_url = (*empty)->url();
  {
    PgStore store(options);
    const Status before = store.Ready();
    EXPECT_EQ(before.code(), Code::kFailedPrecondition);
    EXPECT_THAT(before.message(), HasSubstr("migration 0001_init.sql is not applied"));
  }
  PgStore migrated(Options());
  EXPECT_TRUE(migrated.Ready().ok());
}

TEST(PgStoreUnreachable, ReportsUnavailable) {
  PgStoreOptions options;
  options.database_url = "postgresql:///septa?host=%2Fnonexistent&user=septa";
  PgStore store(options);
  EXPECT_EQ(store.Ready().code(), Code::kUnavailable);
  const Status st = store.Transact(core::TxMode::kReadOnly, [](core::Tx&) { return Status::Ok(); });
  EXPECT_EQ(st.code(), Code::kUnavailable);
  EXPECT_THAT(st.message(), HasSubstr("cannot connect to PostgreSQL"));
  EXPECT_EQ(store.Stats().pool.in_use, 0);
}

}  // namespace
}  // namespace septa::store
