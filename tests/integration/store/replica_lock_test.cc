// ReplicaLock on the test run's PostgreSQL: one live session per replica
// id; a second claimant is refused naming the holder; the lock is free again
// the moment its session ends; a lost session is taken again, or reported
// when someone else took the lock meanwhile.
#include "services/store/replica_lock.h"

#include <gtest/gtest.h>
#include <pqxx/pqxx>

#include <future>
#include <vector>

#include "tests/support/test_database.h"

namespace septa::store {
namespace {

using namespace std::chrono_literals;

class ReplicaLockTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto database = test::TestDatabase::Create();
    ASSERT_TRUE(database.ok()) << database.status().ToString();
    database_ = *std::move(database);
  }

  ReplicaLockOptions Options(std::string id, std::chrono::milliseconds wait = 0ms) {
    return {.database_url = database_->url(),
            .replica_id = std::move(id),
            .wait = wait,
            .check_every = 20ms,
            .on_lost = {}};
  }

  // Ends backend `pid` as a restarted database or a cut network would.
  void Terminate(int pid) {
    pqxx::connection admin(database_->url());
    pqxx::nontransaction tx(admin);
    ASSERT_TRUE(tx.exec_params1("SELECT pg_terminate_backend($1)", pid)[0].as<bool>());
  }

  std::unique_ptr<test::TestDatabase> database_;
};

TEST_F(ReplicaLockTest, ASecondClaimantIsRefusedNamingTheHolder) {
  auto first = ReplicaLock::Acquire(Options("r1"));
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  auto second = ReplicaLock::Acquire(Options("r1", 200ms));
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), Code::kFailedPrecondition);
  EXPECT_NE(second.status().message().find("replica_id \"r1\" is in use by another live septad (PostgreSQL session " +
                                           std::to_string((*first)->backend_pid())),
            std::string::npos)
      << second.status().message();
  EXPECT_TRUE(ReplicaLock::Acquire(Options("r2")).ok()) << "another id is another lock";
}

// Advisory locks are per database: replicas of other installations (other
// databases on the server) with the same replica_id hold other locks, and
// the refusal names the holder in this database, not one of theirs.
TEST_F(ReplicaLockTest, TheHolderNamedIsTheOneInThisDatabase) {
  std::vector<std::unique_ptr<test::TestDatabase>> others;
  std::vector<std::unique_ptr<ReplicaLock>> their_locks;
  for (int i = 0; i < 6; ++i) {
    auto other = test::TestDatabase::Create();
    ASSERT_TRUE(other.ok()) << other.status().ToString();
    ReplicaLockOptions options = Options("r1");
    options.database_url = (*other)->url();
    auto theirs = ReplicaLock::Acquire(options);
    ASSERT_TRUE(theirs.ok()) << "another database, another lock: " << theirs.status().ToString();
    their_locks.push_back(*std::move(theirs));
    others.push_back(*std::move(other));
  }
  auto first = ReplicaLock::Acquire(Options("r1"));
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  auto second = ReplicaLock::Acquire(Options("r1"));
  ASSERT_FALSE(second.ok());
  EXPECT_NE(second.status().message().find("(PostgreSQL session " + std::to_string((*first)->backend_pid()) + " "),
            std::string::npos)
      << second.status().message();
}

TEST_F(ReplicaLockTest, FreeTheMomentItsHolderEnds) {
  auto first = ReplicaLock::Acquire(Options("r1"));
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  first->reset();
  auto again = ReplicaLock::Acquire(Options("r1"));
  EXPECT_TRUE(again.ok()) << again.status().ToString();
}

TEST_F(ReplicaLockTest, AClaimantWaitsForASessionThatIsEnding) {
  auto first = ReplicaLock::Acquire(Options("r1"));
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  auto waiting = std::async(std::launch::async, [&] { return ReplicaLock::Acquire(Options("r1", 30s)); });
  first->reset();
  auto second = waiting.get();
  EXPECT_TRUE(second.ok()) << second.status().ToString();
}

TEST_F(ReplicaLockTest, ALostSessionTakesTheLockAgain) {
  auto lock = ReplicaLock::Acquire(Options("r1"));
  ASSERT_TRUE(lock.ok()) << lock.status().ToString();
  const int old_pid = (*lock)->backend_pid();
  Terminate(old_pid);
  // Bounded: the check runs every 20 ms.
  const auto deadline = std::chrono::steady_clock::now() + 30s;
  while ((*lock)->backend_pid() == old_pid || (*lock)->backend_pid() == 0) {
    ASSERT_LT(std::chrono::steady_clock::now(), deadline) << "the lock was not taken again";
    std::this_thread::sleep_for(5ms);  // polling for the event, bounded above
  }
  auto other = ReplicaLock::Acquire(Options("r1"));
  EXPECT_FALSE(other.ok()) << "held again by the new session";
}

TEST_F(ReplicaLockTest, ALockTakenByAnotherWhileLostIsReported) {
  std::promise<Status> lost;
  ReplicaLockOptions options = Options("r1");
  options.on_lost = [&lost](const Status& st) { lost.set_value(st); };
  auto lock = ReplicaLock::Acquire(options);
  ASSERT_TRUE(lock.ok()) << lock.status().ToString();
  // Another session queues for the same lock, so that it, not the lock's
  // own reconnection, gets it the moment the holder's session ends.
  pqxx::connection usurper(database_->url());
  auto queued = std::async(std::launch::async, [&] {
    pqxx::nontransaction tx(usurper);
    tx.exec("SELECT pg_advisory_lock(hashtextextended('septa-replica:r1', 0))");
  });
  pqxx::connection observer(database_->url());
  const auto deadline = std::chrono::steady_clock::now() + 30s;
  for (;;) {
    pqxx::nontransaction tx(observer);
    if (tx.exec_params1("SELECT count(*) FROM pg_locks WHERE pid = $1 AND locktype = 'advisory' AND NOT granted",
                        usurper.backendpid())[0]
            .as<int>() == 1) {
      break;
    }
    ASSERT_LT(std::chrono::steady_clock::now(), deadline) << "the other session never queued";
    std::this_thread::sleep_for(5ms);  // polling for the event, bounded above
  }
  Terminate((*lock)->backend_pid());
  queued.get();
  auto reported = lost.get_future();
  ASSERT_EQ(reported.wait_for(30s), std::future_status::ready) << "the loss was not reported";
  const Status st = reported.get();
  EXPECT_EQ(st.code(), Code::kFailedPrecondition);
  EXPECT_NE(st.message().find("replica_id \"r1\" is in use by another live septad (PostgreSQL session " +
                              std::to_string(usurper.backendpid())),
            std::string::npos)
      << st.message();
}

}  // namespace
}  // namespace septa::store
