#include "services/reconcile/work_queue.h"

#include <gtest/gtest.h>

#include <atomic>
#include <set>
#include <thread>
#include <vector>

#include "tests/support/fake_clock.h"
#include "tests/unit/services/reconcile/bounded_wait.h"

namespace septa::reconcile {
namespace {

using namespace std::chrono_literals;

// Get, bounded so that a broken queue fails the test instead of hanging it.
std::optional<std::string> GetWithin(WorkQueue<std::string>& queue, std::chrono::milliseconds bound = 10s) {
  testing::StopAfter stop(bound);
  return queue.Get(stop.token());
}

TEST(reconcileWorkQueue, AKeyAddedWhileQueuedIsQueuedOnce) {
  FakeClock clock;
  WorkQueue<std::string> queue(clock);
  queue.Add("a");
  queue.Add("b");
  queue.Add("a");
  EXPECT_EQ(queue.Len(), 2u);
  EXPECT_EQ(GetWithin(queue), "a");
  EXPECT_EQ(GetWithin(queue), "b");
  EXPECT_EQ(queue.Len(), 0u);
}

TEST(reconcileWorkQueue, AKeyAddedWhileProcessedIsQueuedAgainOnceAfterDone) {
  FakeClock clock;
  WorkQueue<std::string> queue(clock);
  queue.Add("a");
  ASSERT_EQ(GetWithin(queue), "a");
  queue.Add("a");
  queue.Add("a");
  EXPECT_EQ(queue.Len(), 0u) << "no second worker may take a key being processed";
  queue.Done("a");
  EXPECT_EQ(queue.Len(), 1u);
  EXPECT_EQ(GetWithin(queue), "a");
  queue.Done("a");
  EXPECT_EQ(queue.Len(), 0u);
}

TEST(reconcileWorkQueue, LowPriorityKeysWaitForEveryNormalOne) {
  FakeClock clock;
  WorkQueue<std::string> queue(clock);
  queue.Add("sweep-1", Priority::kLow);
  queue.Add("sweep-2", Priority::kLow);
  queue.Add("event");
  queue.Add("sweep-2");  // asked for by an event: moved ahead, once
  queue.Add("sweep-3", Priority::kLow);
  queue.Add("event", Priority::kLow);  // queued at normal already: stays there
  EXPECT_EQ(queue.Len(), 4u);
  std::vector<std::string> order;
  while (queue.Len() > 0) {
    order.push_back(*GetWithin(queue));
    queue.Done(order.back());
  }
  EXPECT_EQ(order, (std::vector<std::string>{"event", "sweep-2", "sweep-1", "sweep-3"}));
  EXPECT_TRUE(queue.AwaitIdle(0ms));
}

TEST(reconcileWorkQueue, AKeyReaddedWhileProcessedKeepsTheHighestPriorityAskedFor) {
  FakeClock clock;
  WorkQueue<std::string> queue(clock);
  queue.Add("a");
  queue.Add("b");
  ASSERT_EQ(GetWithin(queue), "a");
  ASSERT_EQ(GetWithin(queue), "b");
  queue.Add("later", Priority::kLow);
  queue.Add("a", Priority::kLow);
  queue.Add("b", Priority::kLow);
  queue.Add("b");
  queue.Done("a");
  queue.Done("b");
  EXPECT_EQ(queue.Len(), 3u);
  EXPECT_EQ(GetWithin(queue), "b") << "re-added at normal priority";
  EXPECT_EQ(GetWithin(queue), "later");
  EXPECT_EQ(GetWithin(queue), "a");
  EXPECT_EQ(queue.Len(), 0u);
}

TEST(reconcileWorkQueue, AddAfterReleasesTheKeyWhenTheClockGetsThere) {
  FakeClock clock;
  WorkQueue<std::string> queue(clock);
  queue.AddAfter("a", 10s);
  EXPECT_EQ(queue.Len(), 0u);
  EXPECT_EQ(queue.Waiting(), 1u);
  clock.Advance(9999ms);
  EXPECT_EQ(queue.Len(), 0u) << "not due yet";
  clock.Advance(1ms);
  EXPECT_EQ(GetWithin(queue), "a");
  EXPECT_EQ(queue.Waiting(), 0u);
}

TEST(reconcileWorkQueue, AWaitingKeyKeepsTheEarlierOfItsTimes) {
  FakeClock clock;
  WorkQueue<std::string> queue(clock);
  queue.AddAfter("late", 1h);  // the delay thread sleeps towards this one
  queue.AddAfter("a", 10s);
  queue.AddAfter("a", 2s);
  queue.AddAfter("a", 5s);
  EXPECT_EQ(queue.Waiting(), 2u);
  clock.Advance(2s);
  EXPECT_EQ(GetWithin(queue), "a");
  queue.Done("a");
  clock.Advance(10s);
  EXPECT_TRUE(queue.AwaitIdle(10s));
  EXPECT_EQ(queue.Len(), 0u) << "the later times of 'a' were dropped";
  EXPECT_EQ(queue.Waiting(), 1u);
}

TEST(reconcileWorkQueue, AHugeDelayIsCappedAtAYearInsteadOfOverflowing) {
  FakeClock clock;
  WorkQueue<std::string> queue(clock);
  queue.AddAfter("a", std::chrono::nanoseconds::max());
  clock.Advance(std::chrono::hours(24 * 365) - 1s);
  EXPECT_EQ(queue.Len(), 0u);
  clock.Advance(1s);
  EXPECT_EQ(GetWithin(queue), "a");
}

TEST(reconcileWorkQueue, BackoffDoublesPerKeyUpToTheCapAndForgetResetsIt) {
  FakeClock clock;
  WorkQueue<std::string> queue(clock, {.base_delay = 100ms, .max_delay = 1s});
  const std::vector<std::chrono::milliseconds> expected = {100ms, 200ms, 400ms, 800ms, 1s, 1s};
  for (std::size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(queue.NumRequeues("a"), static_cast<int>(i));
    queue.AddRateLimited("a");
    clock.Advance(expected[i] - 1ms);
    EXPECT_EQ(queue.Len(), 0u) << "failure " << i + 1 << " released early";
    clock.Advance(1ms);
    ASSERT_EQ(GetWithin(queue), "a") << "failure " << i + 1;
    queue.Done("a");
  }
  queue.AddRateLimited("b");  // another key has its own backoff
  clock.Advance(100ms);
  EXPECT_EQ(GetWithin(queue), "b");
  queue.Done("b");

  queue.Forget("a");
  EXPECT_EQ(queue.NumRequeues("a"), 0);
  queue.AddRateLimited("a");
  clock.Advance(100ms);
  EXPECT_EQ(GetWithin(queue), "a") << "back to the base delay";
}

TEST(reconcileWorkQueue, TheOverallTokenBucketSpacesOutBurstsOfFailures) {
  FakeClock clock;
  WorkQueue<std::string> queue(clock,
                               {.base_delay = 1ms, .max_delay = 1s, .overall_rate_per_second = 2, .overall_burst = 2});
  queue.AddRateLimited("a");
  queue.AddRateLimited("b");
  queue.AddRateLimited("c");  // the bucket is empty: c waits for the next token, half a second
  queue.AddRateLimited("d");  // and d for the one after
  clock.Advance(1ms);
  std::set<std::string> first = {*GetWithin(queue), *GetWithin(queue)};
  EXPECT_EQ(first, (std::set<std::string>{"a", "b"}));
  EXPECT_EQ(queue.Waiting(), 2u);
  clock.Advance(499ms);
  EXPECT_EQ(GetWithin(queue), "c");
  EXPECT_EQ(queue.Len(), 0u);
  clock.Advance(499ms);
  EXPECT_EQ(queue.Len(), 0u) << "d is due a full second after the burst";
  clock.Advance(1ms);
  EXPECT_EQ(GetWithin(queue), "d");
}

TEST(reconcileWorkQueue, ShutDownReleasesBlockedGettersAndIgnoresAdds) {
  FakeClock clock;
  WorkQueue<std::string> queue(clock);
  std::optional<std::string> got = "unset";
  std::thread getter([&] { got = queue.Get(); });
  queue.ShutDown();
  getter.join();
  EXPECT_EQ(got, std::nullopt);
  queue.Add("a");
  queue.AddAfter("b", 1s);
  EXPECT_TRUE(queue.ShuttingDown());
  EXPECT_EQ(queue.Len(), 0u);
  EXPECT_EQ(queue.Waiting(), 0u);
}

TEST(reconcileWorkQueue, AStopRequestEndsGet) {
  FakeClock clock;
  WorkQueue<std::string> queue(clock);
  std::stop_source stop;
  std::optional<std::string> got = "unset";
  std::thread getter([&] { got = queue.Get(stop.get_token()); });
  stop.request_stop();
  getter.join();
  EXPECT_EQ(got, std::nullopt);
  EXPECT_FALSE(queue.ShuttingDown());
}

// Producers and workers at full speed (and under TSan in CI): no key is ever
// held by two workers at once, and every key added is processed.
TEST(reconcileWorkQueue, ConcurrentWorkersNeverHoldOneKeyTwice) {
  FakeClock clock;
  WorkQueue<std::string> queue(clock);
  constexpr int kKeys = 10, kProducers = 3, kAddsEach = 500, kWorkers = 4;
  std::mutex mu;
  std::condition_variable all_seen;
  std::set<std::string> in_flight, seen;
  std::atomic<int> overlaps{0};
  std::vector<std::jthread> workers;
  for (int w = 0; w < kWorkers; ++w) {
    workers.emplace_back([&](std::stop_token stop) {
      while (auto key = queue.Get(stop)) {
        {
          std::lock_guard lock(mu);
          if (!in_flight.insert(*key).second) ++overlaps;
          seen.insert(*key);
          all_seen.notify_all();
        }
        std::this_thread::yield();
        {
          std::lock_guard lock(mu);
          in_flight.erase(*key);
        }
        queue.Done(*key);
      }
    });
  }
  {
    std::vector<std::jthread> producers;
    for (int p = 0; p < kProducers; ++p) {
      producers.emplace_back([&] {
        for (int i = 0; i < kAddsEach; ++i) queue.Add("k" + std::to_string(i % kKeys));
      });
    }
  }
  {
    std::unique_lock lock(mu);
    all_seen.wait_for(lock, 10s, [&] { return seen.size() == kKeys; });  // a bound, not a pause
    EXPECT_EQ(seen.size(), static_cast<std::size_t>(kKeys));
  }
  queue.ShutDown();
  workers.clear();
  EXPECT_EQ(overlaps.load(), 0);
}

}  // namespace
}  // namespace septa::reconcile
