#include "services/reconcile/controller.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <mutex>
#include <stdexcept>

#include "services/reconcile/apply_set_controller.h"
#include "services/reconcile/shard.h"
#include "tenancy/virtual_cluster_ref.h"
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
  Controller<std::string>& Make(ControllerOptions<std::string> options = {}) {
    if (options.name.empty()) options.name = "test";
    options.queue.base_delay = 100ms;
    options.queue.max_delay = 1s;
    controller_ = std::make_unique<Controller<std::string>>(std::move(options), reconciler_, clock_, registry_);
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
  std::unique_ptr<Controller<std::string>> controller_;  // last: stopped before the rest goes
};

TEST_F(reconcileController, DoneReconcilesOnceAndCountsASuccess) {
  Controller<std::string>& c = Make();
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
  Controller<std::string>& c = Make();
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
  Controller<std::string>& c = Make();
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
  Controller<std::string>& c = Make({.workers = 1});
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
  Controller<std::string>& c = Make();
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
  Controller<std::string>& c = Make({.workers = 1});
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
  Controller<std::string>& c = Make({.list_keys = [&]() -> Result<std::vector<std::string>> {
    ++lists;
    if (fail_next.exchange(false)) return Unavailable("database down");
    return std::vector<std::string>{"a", "b", "c"};
  }});
  Settle();
  EXPECT_THAT(reconciler_.calls(), UnorderedElementsAre("a", "b", "c")) << "Start resyncs";
  fail_next = true;
  c.Resync();  // no key stands for it (an empty NOTIFY payload is decoded into a Resync by its listener)
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
  Controller<std::string> first({.name = "first", .shards = &leases}, first_reconciler, clock_, registry_);
  first.Start();
  Make({.shards = &leases, .shard_key = [](const std::string& key) {
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
  Controller<std::string>& c = Make({.workers = 3});
  c.Enqueue("a");
  Settle();
  c.Stop();
  c.Enqueue("b");
  EXPECT_EQ(c.QueueLength(), 0u);
  EXPECT_THAT(reconciler_.calls(), ElementsAre("a"));
}

TEST_F(reconcileController, ControllersShareTheFamiliesOfOneRegistry) {
  testing::RecordingReconciler other_reconciler;
  Controller<std::string> other({.name = "other"}, other_reconciler, clock_, registry_);
  other.Start();
  other.Enqueue("x");
  ASSERT_TRUE(other.AwaitIdle(kBound));
  Make().Enqueue("y");
  Settle();
  EXPECT_EQ(MetricValue(registry_, "septa_reconcile_total", {{"controller", "other"}, {"result", "success"}}), 1);
  EXPECT_EQ(Total("success"), 1);
}

// A controller of typed keys: the reconciler gets them as they were
// enqueued, listed and sharded; nothing is parsed on the way.
TEST(reconcileTypedController, ItsReconcilerGetsTypedKeysListedEnqueuedAndShardedAsTheyAre) {
  using tenancy::VirtualClusterRef;
  class Recording final : public Reconciler<VirtualClusterRef> {
   public:
    Outcome Reconcile(const VirtualClusterRef& key) override {
      std::lock_guard lock(mu);
      calls.push_back(key);
      // An error names its key by the codec (the log line; not asserted here).
      return key.vcluster == "broken" ? Outcome::Error(Unavailable("down")) : Outcome::Done();
    }
    std::vector<VirtualClusterRef> Calls() {
      std::lock_guard lock(mu);
      return calls;
    }
    std::mutex mu;
    std::vector<VirtualClusterRef> calls;
  };
  FakeClock clock;
  prometheus::Registry registry;
  core::FakeLeaseStore lease_store;
  ShardLeases leases({.name = "typed", .holder = "me", .shards = 8}, lease_store, clock);
  const VirtualClusterRef held{"acme", "train"};
  const int held_shard = ShardOf("acme/train", 8);
  for (int shard = 0; shard < 8; ++shard) {
    if (shard == held_shard) continue;
    ASSERT_TRUE(lease_store.TryAcquire("typed/" + std::to_string(shard), "other", clock.Now(), 1h).ok());
  }
  leases.Start();
  ASSERT_TRUE(leases.AwaitRounds(1, kBound));
  VirtualClusterRef foreign;
  for (int i = 0; foreign.tenant.empty(); ++i) {
    if (VirtualClusterRef ref{"t" + std::to_string(i), "vc"}; ShardOf(ref.ToString(), 8) != held_shard) foreign = ref;
  }
  Recording reconciler;
  std::atomic<int> lists{0};
  Controller<VirtualClusterRef> controller({.name = "typed",
                                            .list_keys = [&]() -> Result<std::vector<VirtualClusterRef>> {
                                              ++lists;
                                              return std::vector<VirtualClusterRef>{held, foreign};
                                            },
                                            .shards = &leases},
                                           reconciler, clock, registry);
  controller.Start();
  ASSERT_TRUE(controller.AwaitIdle(kBound));
  EXPECT_EQ(reconciler.Calls(), std::vector<VirtualClusterRef>{held}) << "the other replica's key is dropped";
  EXPECT_TRUE(controller.Owns(held));
  EXPECT_FALSE(controller.Owns(foreign));
  controller.Enqueue(VirtualClusterRef{"acme", "broken"});
  ASSERT_TRUE(controller.AwaitIdle(kBound));
  if (controller.Owns(VirtualClusterRef{"acme", "broken"})) {
    EXPECT_EQ(reconciler.Calls().back(), (VirtualClusterRef{"acme", "broken"}));
  }
  controller.Resync();
  ASSERT_TRUE(controller.AwaitIdle(kBound));
  EXPECT_EQ(lists.load(), 2);
  EXPECT_EQ(EncodeKey(held), "acme/train");
  EXPECT_EQ(DecodeKey<VirtualClusterRef>("acme/train"), held);
  controller.Stop();  // before the leases it reads
}

TEST(reconcileKeys, TheCodecsRoundTripAndRefuseWhatIsNoKey) {
  using tenancy::VirtualClusterRef;
  for (const VirtualClusterRef& ref : {VirtualClusterRef{"acme", "train"}, VirtualClusterRef{"t-0", "v.1-x"}}) {
    EXPECT_EQ(DecodeKey<VirtualClusterRef>(EncodeKey(ref)), ref);
  }
  EXPECT_EQ(EncodeKey(VirtualClusterRef{"t-0", "v.1-x"}), "t-0/v.1-x");
  for (const char* text : {"", "/", "acme", "acme/", "/train", "acme/train/x", "acme//train"}) {
    EXPECT_EQ(DecodeKey<VirtualClusterRef>(text), std::nullopt) << '"' << text << '"';
  }
  EXPECT_EQ(DecodeKey<std::string>("node-1.example"), "node-1.example");
  EXPECT_EQ(DecodeKey<std::string>(""), std::nullopt) << "no object is named \"\"";
  EXPECT_EQ(EncodeKey(std::string("default/cm")), "default/cm");

  // Apply sets: "<tenant>/<name>", the platform's with an empty tenant.
  for (const ApplySetKey& key : {ApplySetKey{"", "prod"}, ApplySetKey{"acme", "git"}}) {
    EXPECT_EQ(DecodeKey<ApplySetKey>(EncodeKey(key)), key);
  }
  EXPECT_EQ(EncodeKey(ApplySetKey{"", "prod"}), "/prod");
  for (const char* text : {"", "prod", "/", "acme/", "acme/git/rest", "//prod"}) {
    EXPECT_EQ(DecodeKey<ApplySetKey>(text), std::nullopt) << '"' << text << '"';
  }
}

}  // namespace
}  // namespace septa::reconcile
