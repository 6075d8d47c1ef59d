#include "services/reconcile/shard_leases.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>

#include <prometheus/registry.h>

#include "services/reconcile/controller.h"
#include "services/reconcile/shard.h"
#include "tests/support/fake_clock.h"
#include "tests/support/fake_lease_store.h"
#include "tests/unit/services/reconcile/bounded_wait.h"
#include "tests/unit/services/reconcile/recording_reconciler.h"

namespace septa::reconcile {
namespace {

using namespace std::chrono_literals;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

using testing::kBound;

TEST(reconcileShard, TheHashIsStableAndSpreadsKeys) {
  // Fixed values: every replica, build and platform must agree on them.
  EXPECT_EQ(ShardOf("", 8), static_cast<int>(0xcbf29ce484222325ULL % 8));
  EXPECT_EQ(ShardOf("tenant-a/vc-1", 1), 0);
  EXPECT_EQ(ShardOf("anything", 0), 0);
  std::vector<int> per_shard(4);
  for (int i = 0; i < 400; ++i) ++per_shard[ShardOf("key-" + std::to_string(i), 4)];
  for (int n : per_shard) EXPECT_GT(n, 60) << "a shard got far less than its share";
}

class reconcileShardLeases : public ::testing::Test {
 protected:
  ShardLeasesOptions Options(std::string holder) {
    return {.name = "ctl", .holder = std::move(holder), .shards = 4, .ttl = 30s};
  }
  core::Lease Stored(const std::string& name) {
    auto lease = store_.Get(name);
    EXPECT_TRUE(lease.ok() && lease->has_value());
    return lease.ok() && lease->has_value() ? **lease : core::Lease{};
  }

  FakeClock clock_;
  core::FakeLeaseStore store_;
};

TEST_F(reconcileShardLeases, TakesFreeShardsAndRenewsThemEveryThirdOfTheTtl) {
  ShardLeases leases(Options("a"), store_, clock_);
  const TimePoint t0 = clock_.Now();
  leases.Start();
  ASSERT_TRUE(leases.AwaitRounds(1, kBound));
  EXPECT_THAT(leases.Held(), ElementsAre(0, 1, 2, 3));
  EXPECT_EQ(Stored("ctl/2"), (core::Lease{"ctl/2", "a", t0 + 30s, 1, 0}));
  clock_.Advance(9999ms);
  EXPECT_EQ(leases.rounds(), 1u) << "no round before TTL/3";
  clock_.Advance(1ms);
  ASSERT_TRUE(leases.AwaitRounds(2, kBound));
  EXPECT_EQ(Stored("ctl/2"), (core::Lease{"ctl/2", "a", t0 + 40s, 1, 1}));
  leases.Stop();
  EXPECT_EQ(Stored("ctl/2").holder, "") << "a clean stop releases";
  EXPECT_THAT(leases.Held(), IsEmpty());
}

TEST_F(reconcileShardLeases, AReplicaTakesNothingAnotherHoldsAndReportsWhatItGains) {
  ShardLeases a(Options("a"), store_, clock_);
  a.Start();
  ASSERT_TRUE(a.AwaitRounds(1, kBound));
  ASSERT_TRUE(store_.Release("ctl/1", "a").ok());  // as if a had given shard 1 up
  std::mutex mu;
  std::vector<std::vector<int>> gains;
  ShardLeases b(Options("b"), store_, clock_);
  b.OnGained(&gains, [&](const std::vector<int>& gained) {
    std::lock_guard lock(mu);
    gains.push_back(gained);
  });
  b.Start();
  ASSERT_TRUE(b.AwaitRounds(1, kBound));
  EXPECT_THAT(b.Held(), ElementsAre(1));
  std::lock_guard lock(mu);
  EXPECT_THAT(gains, ElementsAre(ElementsAre(1)));
}

TEST_F(reconcileShardLeases, AShardWhoseRenewalFailsIsGivenUpAtOnce) {
  core::PartitionableLeaseStore reachable(store_);
  ShardLeases leases(Options("a"), reachable, clock_);
  leases.Start();
  ASSERT_TRUE(leases.AwaitRounds(1, kBound));
  ASSERT_TRUE(leases.Holds(0));
  reachable.CutOff();
  clock_.Advance(10s);
  ASSERT_TRUE(leases.AwaitRounds(2, kBound));
  EXPECT_THAT(leases.Held(), IsEmpty()) << "it cannot know whether it still holds them";
  EXPECT_EQ(Stored("ctl/0").holder, "a") << "in the store, until it expires";
}

TEST_F(reconcileShardLeases, NoShardCountMeansOneShard) {
  ShardLeases leases({.name = "ctl", .holder = "a", .shards = 0, .ttl = 30s}, store_, clock_);
  EXPECT_EQ(leases.shard_count(), 1);
  leases.Start();
  ASSERT_TRUE(leases.AwaitRounds(1, kBound));
  EXPECT_THAT(leases.Held(), ElementsAre(0));
  EXPECT_EQ(Stored("ctl/0").holder, "a");
}

TEST_F(reconcileShardLeases, OnGainedIsToldTheShardsHeldAlready) {
  ShardLeases leases(Options("a"), store_, clock_);
  leases.Start();
  ASSERT_TRUE(leases.AwaitRounds(1, kBound));
  std::vector<int> told;
  leases.OnGained(&told, [&](const std::vector<int>& gained) { told = gained; });
  EXPECT_THAT(told, ElementsAre(0, 1, 2, 3));
  leases.OnGained(&told, nullptr);
}

TEST_F(reconcileShardLeases, EveryListenerIsToldWhatIsGainedAndARemovedOneNoMore) {
  ASSERT_TRUE(store_.TryAcquire("ctl/1", "other", clock_.Now(), 5s).ok());
  ShardLeases leases(Options("a"), store_, clock_);
  std::mutex mu;
  std::vector<std::vector<int>> first, second, removed;
  auto record = [&mu](std::vector<std::vector<int>>& into) {
    return [&mu, &into](const std::vector<int>& gained) {
      std::lock_guard lock(mu);
      into.push_back(gained);
    };
  };
  leases.OnGained(&first, record(first));
  leases.OnGained(&second, record(second));
  leases.OnGained(&removed, record(removed));
  leases.OnGained(&removed, nullptr);
  leases.Start();
  ASSERT_TRUE(leases.AwaitRounds(1, kBound));
  clock_.Advance(5s);  // other's lease on shard 1 expires: a round takes it
  ASSERT_TRUE(leases.AwaitRounds(2, kBound));
  std::lock_guard lock(mu);
  EXPECT_THAT(first, ElementsAre(ElementsAre(0, 2, 3), ElementsAre(1)));
  EXPECT_EQ(second, first);
  EXPECT_THAT(removed, IsEmpty());
}

// A controller over shards acts only on keys of shards held: others are
// dropped when enqueued, and the keys of a gained shard are listed again.
TEST_F(reconcileShardLeases, AControllerActsOnlyOnKeysOfItsShards) {
  ASSERT_TRUE(store_.TryAcquire("ctl/0", "other", clock_.Now(), 30s).ok());
  ShardLeases leases(Options("a"), store_, clock_);
  std::vector<std::string> keys, mine;
  for (int i = 0; i < 40; ++i) {
    keys.push_back("key-" + std::to_string(i));
    if (ShardOf(keys.back(), 4) != 0) mine.push_back(keys.back());
  }
  ASSERT_FALSE(mine.empty());
  ASSERT_LT(mine.size(), keys.size());
  prometheus::Registry registry;
  testing::RecordingReconciler reconciler;
  Controller<std::string> controller(
      {.name = "ctl", .list_keys = [&]() -> Result<std::vector<std::string>> { return keys; }, .shards = &leases},
      reconciler, clock_, registry);
  controller.Start();
  leases.Start();
  ASSERT_TRUE(leases.AwaitRounds(1, kBound));
  ASSERT_TRUE(controller.AwaitIdle(kBound));
  // The start-up resync and the resync of newly gained shards may both hand
  // a key over (reconcilers are level-based): what matters is which keys.
  const std::vector<std::string> calls = reconciler.calls();
  EXPECT_EQ(std::set<std::string>(calls.begin(), calls.end()), std::set<std::string>(mine.begin(), mine.end()));
  const std::string foreign = *std::find_if(keys.begin(), keys.end(), [](auto& k) { return ShardOf(k, 4) == 0; });
  controller.Enqueue(foreign);
  EXPECT_EQ(controller.QueueLength(), 0u) << "shard 0 is another replica's";
  EXPECT_FALSE(controller.Owns(foreign));
  controller.Stop();
}

}  // namespace
}  // namespace septa::reconcile
