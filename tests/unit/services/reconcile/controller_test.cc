#include "services/reconcile/controller.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <stdexcept>

#include "services/reconcile/shard.h"
#include "tests/support/fake_clock.h"
#include "tests/support/fake_lease_store.h"
#include "tests/unit/services/reconcile/bounded_wait.h"
#include "tests/unit/services/reconcile/recording_reconciler.h"

namespace septa::reconcile {
namespace {

using namespace std::chrono_literals;
using ::testing::ElementsAre;
using testing::MetricValue;
using ::testing::UnorderedElementsAre;

using testing::kBound;

class reconcileController : public ::testing::Test {
 protected:
  Controller& Make(ControllerOptions options = {}) {
    if (options.name.empty()) options.name = "test";
    options.queue.base_delay = 100ms;
    options.queue.max_delay = 1s;
    controller_ = std::make_unique<Controller>(std::move(options), reconciler_, clock_, registry_);
    controller_->Start();
    return *controller_;
  }
  double Total(const std::string& result) const {
    return MetricValue(registry_, "septa_reconcile_total", {{"controller", "test"}, {"result", result}});
  }
  double Errors() const { return MetricValue(registry_, "septa_reconcile_errors_total", {{"controller", "test"}}); }
  double Depth() const { return MetricValue(registry_, "septa_reconcile_queue_depth", {{"controller", "test"}}); }
  void Settle() { ASSERT_TRUE(controller_->AwaitIdle(kBound)); }

  FakeClock clock_;
  prometheus::Registry registry_;
  testing::RecordingReconciler reconciler_;
  std::unique_ptr<Controller> controller_;  // last: stopped before the rest goes
};

TEST_F(reconcileController, DoneReconcilesOnceAndCountsASuccess) {
  Controller& c = Make();
  c.Enqueue("a");
  Settle();
  EXPECT_THAT(reconciler_.calls(), ElementsAre("a"));
  EXPECT_EQ(Total("success"), 1);
  EXPECT_EQ(Total("requeue"), 0);
  EXPECT_EQ(Total("error"), 0);
  EXPECT_EQ(Errors(), 0);
  EXPECT_EQ(MetricValue(registry_, "septa_reconcile_duration_seconds", {{"controller", "test"}}), 1);
}

TEST_F(reconcileController, RequeueAfterLooksAgainAfterTheDelayOfTheClock) {
  reconciler_.Script("a", {[] { return Outcome::RequeueAfter(30s); }});
  Controller& c = Make();
  c.Enqueue("a");
  Settle();
  clock_.Advance(29s);
  Settle();
  EXPECT_EQ(reconciler_.CallsOf("a"), 1);
  clock_.Advance(1s);
  Settle();
  EXPECT_EQ(reconciler_.CallsOf("a"), 2);
  EXPECT_EQ(Total("requeue"), 1);
  EXPECT_EQ(Total("success"), 1);
}

TEST_F(reconcileController, ErrorsRetryWithGrowingBackoffThatSuccessResets) {
  auto fail = [] { return Outcome::Error(Unavailable("cluster unreachable")); };
  reconciler_.Script("a", {fail, fail});
  Controller& c = Make();
  c.Enqueue("a");
  Settle();
  EXPECT_EQ(reconciler_.CallsOf("a"), 1);
  clock_.Advance(99ms);
  Settle();
  EXPECT_EQ(reconciler_.CallsOf("a"), 1) << "retried before the first backoff";
  clock_.Advance(1ms);
  Settle();
  EXPECT_EQ(reconciler_.CallsOf("a"), 2);
  clock_.Advance(199ms);
  Settle();
  EXPECT_EQ(reconciler_.CallsOf("a"), 2) << "the second backoff is twice the first";
  clock_.Advance(1ms);
  Settle();
  EXPECT_EQ(reconciler_.CallsOf("a"), 3);
  EXPECT_EQ(Total("error"), 2);
  EXPECT_EQ(Errors(), 2);
  EXPECT_EQ(Total("success"), 1);

  reconciler_.Script("a", {fail});  // the success forgot the backoff
  c.Enqueue("a");
  Settle();
  clock_.Advance(100ms);
  Settle();
  EXPECT_EQ(reconciler_.CallsOf("a"), 5);
}

TEST_F(reconcileController, AThrowingReconcilerIsAnErrorWithBackoffAndTheWorkerLivesOn) {
  reconciler_.Script("a", {[]() -> Outcome { throw std::runtime_error("boom"); }, []() -> Outcome { throw 42; }});
  Controller& c = Make({.workers = 1});
  c.Enqueue("a");
  Settle();
  c.Enqueue("b");
  Settle();
  EXPECT_THAT(reconciler_.calls(), ElementsAre("a", "b")) << "the only worker survived";
  clock_.Advance(100ms);
  Settle();
  clock_.Advance(200ms);
  Settle();
  EXPECT_EQ(reconciler_.CallsOf("a"), 3);
  EXPECT_EQ(Errors(), 2);
  EXPECT_EQ(Total("error"), 2);
  EXPECT_EQ(Total("success"), 2);
}

TEST_F(reconcileController, DurationIsMeasuredOnTheInjectedClock) {
  reconciler_.Script("slow", {[this] {
                       clock_.Advance(2500ms);
                       return Outcome::Done();
                     }});
  Controller& c = Make();
  c.Enqueue("slow");
  Settle();
  EXPECT_EQ(MetricValue(registry_, "septa_reconcile_duration_seconds", {{"controller", "test"}}), 1);
  EXPECT_DOUBLE_EQ(testing::HistogramSum(registry_, "septa_reconcile_duration_seconds", {{"controller", "test"}}), 2.5);
}

TEST_F(reconcileController, QueueDepthCountsReadyKeysOncePerKey) {
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  reconciler_.Script("busy", {[released] {
                       released.wait();
                       return Outcome::Done();
                     }});
  Controller& c = Make({.workers = 1});
  c.Enqueue("busy");
  ASSERT_TRUE(reconciler_.AwaitCalls([](const auto& calls) { return !calls.empty(); }));
  c.Enqueue("b");
  c.Enqueue("c");
  c.Enqueue("b");
  EXPECT_EQ(Depth(), 2);
  EXPECT_EQ(c.QueueLength(), 2u);
  release.set_value();
  Settle();
  EXPECT_EQ(Depth(), 0);
  EXPECT_THAT(reconciler_.calls(), ElementsAre("busy", "b", "c"));
}

TEST_F(reconcileController, ResyncListsEveryKeyAtStartAndOnRequestAndRetriesAFailedList) {
  std::atomic<int> lists{0};
  std::atomic<bool> fail_next{false};
  Controller& c = Make({.list_keys = [&]() -> Result<std::vector<std::string>> {
    ++lists;
    if (fail_next.exchange(false)) return Unavailable("database down");
    return std::vector<std::string>{"a", "b", "c"};
  }});
  Settle();
  EXPECT_THAT(reconciler_.calls(), UnorderedElementsAre("a", "b", "c")) << "Start resyncs";
  fail_next = true;
  c.Enqueue("");  // an empty key (e.g. an empty NOTIFY payload) asks for a resync
  Settle();
  EXPECT_EQ(lists.load(), 2);
  EXPECT_EQ(reconciler_.calls().size(), 3u) << "the failed list enqueued nothing";
  clock_.Advance(100ms);
  Settle();
  EXPECT_EQ(lists.load(), 3) << "the list is retried after a backoff";
  EXPECT_EQ(reconciler_.calls().size(), 6u);
  EXPECT_EQ(Total("error"), 0) << "a resync is not a reconcile";
}

TEST_F(reconcileController, StartWithShardsHeldAlreadyListsAndReconcilesEveryKeyOnce) {
  core::FakeLeaseStore lease_store;
  ShardLeases leases({.name = "test", .holder = "me", .shards = 4}, lease_store, clock_);
  leases.Start();
  ASSERT_TRUE(leases.AwaitRounds(1, kBound));
  ASSERT_EQ(leases.Held().size(), 4u);
  std::atomic<int> lists{0};
  Make({.workers = 4,
        .list_keys = [&]() -> Result<std::vector<std::string>> {
          ++lists;
          return std::vector<std::string>{"a", "b", "c"};
        },
        .shards = &leases});
  Settle();
  EXPECT_EQ(lists.load(), 1) << "the start's resync and the held shards' one are one listing";
  EXPECT_THAT(reconciler_.calls(), UnorderedElementsAre("a", "b", "c"));
  controller_.reset();  // before the leases it reads
}

// Two controllers on one ShardLeases; the second shards its keys
// "<prefix>/<rest>" by the prefix, so a key follows its prefix's shard.
TEST_F(reconcileController, ControllersShareLeasesAndAShardKeyPicksTheShardedPart) {
  core::FakeLeaseStore lease_store;
  const std::string held_prefix = "acme/train";
  ShardLeases leases({.name = "test", .holder = "me", .shards = 8}, lease_store, clock_);
  const int held = ShardOf(held_prefix, 8);
  for (int shard = 0; shard < 8; ++shard) {
    if (shard == held) continue;
    ASSERT_TRUE(lease_store.TryAcquire("test/" + std::to_string(shard), "other", clock_.Now(), 1h).ok());
  }

  std::string other_prefix;
  for (int i = 0; other_prefix.empty(); ++i) {
    if (const std::string p = "t" + std::to_string(i) + "/vc"; ShardOf(p, 8) != held) other_prefix = p;
  }
  testing::RecordingReconciler first_reconciler;
  Controller first({.name = "first", .shards = &leases}, first_reconciler, clock_, registry_);
  first.Start();
  Make({.shards = &leases, .shard_key = [](std::string_view key) {
          const std::size_t slash = key.find('/', key.find('/') + 1);
          return key.substr(0, slash);
        }});
  leases.Start();
  ASSERT_TRUE(leases.AwaitRounds(1, kBound));
  EXPECT_TRUE(controller_->Owns(held_prefix + "/default/pod-a"));
  EXPECT_FALSE(controller_->Owns(other_prefix + "/default/pod-a"));
  EXPECT_TRUE(first.Owns(held_prefix));
  controller_->Enqueue(held_prefix + "/default/pod-a");
  controller_->Enqueue(other_prefix + "/default/pod-a");
  Settle();
  EXPECT_THAT(reconciler_.calls(), ElementsAre(held_prefix + "/default/pod-a"));
  first.Stop();
  controller_.reset();  // before the leases it reads
}

TEST_F(reconcileController, StopEndsTheWorkersAndLaterKeysAreIgnored) {
  Controller& c = Make({.workers = 3});
  c.Enqueue("a");
  Settle();
  c.Stop();
  c.Enqueue("b");
  EXPECT_EQ(c.QueueLength(), 0u);
  EXPECT_THAT(reconciler_.calls(), ElementsAre("a"));
}

TEST_F(reconcileController, ControllersShareTheFamiliesOfOneRegistry) {
  testing::RecordingReconciler other_reconciler;
  Controller other({.name = "other"}, other_reconciler, clock_, registry_);
  other.Start();
  other.Enqueue("x");
  ASSERT_TRUE(other.AwaitIdle(kBound));
  Make().Enqueue("y");
  Settle();
  EXPECT_EQ(MetricValue(registry_, "septa_reconcile_total", {{"controller", "other"}, {"result", "success"}}), 1);
  EXPECT_EQ(Total("success"), 1);
}

}  // namespace
}  // namespace septa::reconcile
