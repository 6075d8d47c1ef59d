// Two runtimes (septad replicas) on one PostgreSQL database: exactly one acts
// on each key, and when the one holding the shards dies, the other takes
// them over within the lease TTL and resyncs their keys. The replicas share
// a FakeClock; every step waits for the event it needs, nothing sleeps.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <prometheus/registry.h>

#include "services/reconcile/controller.h"
#include "services/reconcile/shard_leases.h"
#include "services/store/pg_lease_store.h"
#include "tests/support/fake_clock.h"
#include "tests/support/fake_lease_store.h"
#include "tests/support/test_database.h"
#include "tests/unit/services/reconcile/bounded_wait.h"
#include "tests/unit/services/reconcile/recording_reconciler.h"

namespace septa::reconcile {
namespace {

using namespace std::chrono_literals;
using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::UnorderedElementsAreArray;

using testing::kBound;
constexpr auto kTtl = 30s;

// One replica: its own connections to the database, leases, controller and metrics.
struct Replica {
  Replica(const std::string& url, const std::string& holder, const Clock& clock, const std::vector<std::string>& keys)
      : database({.database_url = url}),
        reachable(database),
        leases({.name = "inventory", .holder = holder, .shards = 4, .ttl = kTtl}, reachable, clock),
        controller({.name = "inventory",
                    .workers = 2,
                    .list_keys = [&keys]() -> Result<std::vector<std::string>> { return keys; },
                    .shards = &leases},
                   reconciler, clock, registry) {}

  std::set<std::string> Reconciled() const {
    auto calls = reconciler.calls();
    return {calls.begin(), calls.end()};
  }

  store::PgLeaseStore database;
  core::PartitionableLeaseStore reachable;  // CutOff(): the replica is dead to the database
  ShardLeases leases;
  prometheus::Registry registry;
  testing::RecordingReconciler reconciler;
  Controller<std::string> controller;  // last: stops before the leases it reads
};

TEST(reconcileLeaseHandover, AnotherReplicaTakesOverTheShardsOfADeadOneWithinTheTtl) {
  auto database = test::TestDatabase::CreateMigrated();
  ASSERT_TRUE(database.ok()) << database.status().ToString();
  FakeClock clock;
  const TimePoint t0 = clock.Now();
  std::vector<std::string> keys;
  for (int i = 0; i < 20; ++i) keys.push_back("node-" + std::to_string(i));
  const std::set<std::string> all(keys.begin(), keys.end());

  // A starts first and takes every shard; its controller lists every key.
  auto a = std::make_unique<Replica>((*database)->url(), "replica-a", clock, keys);
  a->controller.Start();
  a->leases.Start();
  ASSERT_TRUE(a->leases.AwaitRounds(1, kBound));
  ASSERT_TRUE(a->controller.AwaitIdle(kBound));
  EXPECT_THAT(a->leases.Held(), ElementsAre(0, 1, 2, 3));
  EXPECT_EQ(a->Reconciled(), all);

  // B finds every shard held: it acts on nothing, and drops what it is told.
  auto b = std::make_unique<Replica>((*database)->url(), "replica-b", clock, keys);
  b->controller.Start();
  b->leases.Start();
  ASSERT_TRUE(b->leases.AwaitRounds(1, kBound));
  ASSERT_TRUE(b->controller.AwaitIdle(kBound));
  EXPECT_THAT(b->leases.Held(), IsEmpty());
  b->controller.Enqueue("node-3");
  EXPECT_EQ(b->controller.QueueLength(), 0u);
  EXPECT_THAT(b->reconciler.calls(), IsEmpty());

  // A dies to the database right after its last renewal (at t0): its next
  // renewal fails and it stops acting at once; B waits for the leases to expire.
  a->reachable.CutOff();
  for (int round = 2; round <= 3; ++round) {
    clock.Advance(kTtl / 3);
    ASSERT_TRUE(a->leases.AwaitRounds(round, kBound));
    ASSERT_TRUE(b->leases.AwaitRounds(round, kBound));
    EXPECT_THAT(a->leases.Held(), IsEmpty()) << "round " << round;
    EXPECT_THAT(b->leases.Held(), IsEmpty()) << "A's leases run until t0 + TTL; round " << round;
  }
  a->controller.Enqueue("node-3");
  EXPECT_EQ(a->controller.QueueLength(), 0u) << "A acts on nothing it cannot renew";

  // t0 + TTL: the leases expired; B takes every shard and resyncs their keys.
  clock.Advance(kTtl / 3);
  ASSERT_TRUE(b->leases.AwaitRounds(4, kBound));
  ASSERT_TRUE(a->leases.AwaitRounds(4, kBound));
  ASSERT_TRUE(b->controller.AwaitIdle(kBound));
  EXPECT_THAT(b->leases.Held(), ElementsAre(0, 1, 2, 3));
  EXPECT_EQ(b->Reconciled(), all);
  EXPECT_EQ(a->Reconciled().size(), all.size()) << "A reconciled nothing after it was cut off";
  for (int shard = 0; shard < 4; ++shard) {
    auto lease = b->database.Get("inventory/" + std::to_string(shard));
    ASSERT_TRUE(lease.ok() && lease->has_value());
    EXPECT_EQ(**lease, (core::Lease{"inventory/" + std::to_string(shard), "replica-b", t0 + 2 * kTtl, 2, 0}));
  }

  // B now acts on what it is told; A, still cut off, never takes a shard back.
  b->controller.Enqueue("node-3");
  ASSERT_TRUE(b->controller.AwaitIdle(kBound));
  EXPECT_EQ(b->reconciler.CallsOf("node-3"), 2);
  clock.Advance(kTtl / 3);
  ASSERT_TRUE(a->leases.AwaitRounds(5, kBound));
  EXPECT_THAT(a->leases.Held(), IsEmpty());

  // A clean stop hands over at once, without waiting for the TTL.
  b->controller.Stop();
  b->leases.Stop();
  auto released = b->database.Get("inventory/0");
  ASSERT_TRUE(released.ok() && released->has_value());
  EXPECT_EQ((*released)->holder, "");
  a.reset();
  b.reset();
}

}  // namespace
}  // namespace septa::reconcile
