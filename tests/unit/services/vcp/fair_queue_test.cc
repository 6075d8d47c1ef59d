// The virtual clusters' listener's fair queue on its own (its effect through
// the listener: api_limits_test.cc). Work items block on a latch the test
// opens, so what runs and what waits is decided by the test, not by timing.
#include "services/vcp/fair_queue.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <condition_variable>
#include <mutex>

#include "tests/support/fake_clock.h"

namespace septa::vcp {
namespace {

using namespace std::chrono_literals;

// Records which work ran, in order; each work waits until the test lets it finish.
class Recorder {
 public:
  std::function<void()> Work(std::string name) {
    return [this, name] {
      std::unique_lock lock(mu_);
      started_.push_back(name);
      changed_.notify_all();
      changed_.wait(lock, [&] { return open_; });
    };
  }
  std::function<void()> Refuse(std::string name) {
    return [this, name] {
      std::lock_guard lock(mu_);
      refused_.push_back(name);
      changed_.notify_all();
    };
  }
  bool AwaitRefused(std::size_t n) {
    std::unique_lock lock(mu_);
    return changed_.wait_for(lock, 10s, [&] { return refused_.size() >= n; });
  }
  bool AwaitStarted(std::size_t n) {
    std::unique_lock lock(mu_);
    return changed_.wait_for(lock, 10s, [&] { return started_.size() >= n; });
  }
  void Open() {
    std::lock_guard lock(mu_);
    open_ = true;
    changed_.notify_all();
  }
  std::vector<std::string> started() {
    std::lock_guard lock(mu_);
    return started_;
  }
  std::vector<std::string> refused() {
    std::lock_guard lock(mu_);
    return refused_;
  }

 private:
  std::mutex mu_;
  std::condition_variable changed_;
  bool open_ = false;
  std::vector<std::string> started_, refused_;
};

TEST(FairQueue, AFlowRunsAtMostItsShareAndQueuesAtMostItsQueueTheRestIsRefused) {
  Recorder r;
  FairQueue queue({.workers = 4, .flow_concurrency = 2, .flow_queue = 1});
  queue.Submit("a", r.Work("a1"), r.Refuse("a1"));
  ASSERT_TRUE(r.AwaitStarted(1));  // taken from the queue of one
  queue.Submit("a", r.Work("a2"), r.Refuse("a2"));
  ASSERT_TRUE(r.AwaitStarted(2));
  for (const char* name : {"a3", "a4"}) queue.Submit("a", r.Work(name), r.Refuse(name));
  EXPECT_THAT(r.started(), ::testing::UnorderedElementsAre("a1", "a2"));  // two running of four workers
  EXPECT_EQ(queue.running("a"), 2u);
  EXPECT_EQ(queue.queued("a"), 1u);
  EXPECT_THAT(r.refused(), ::testing::ElementsAre("a4"));  // refused at once, on the submitting thread
  // Another flow takes the free workers.
  queue.Submit("b", r.Work("b1"), r.Refuse("b1"));
  ASSERT_TRUE(r.AwaitStarted(3));
  r.Open();
  ASSERT_TRUE(r.AwaitStarted(4));
  queue.Stop();
  EXPECT_THAT(r.started(), ::testing::UnorderedElementsAre("a1", "a2", "a3", "b1"));
}

TEST(FairQueue, FreeWorkersTakeTheFlowsInTurnSoABacklogDelaysNobodyElse) {
  Recorder r;
  FairQueue queue({.workers = 1, .flow_concurrency = 1, .flow_queue = 10});
  queue.Submit("a", r.Work("a0"), r.Refuse("a0"));  // holds the one worker
  ASSERT_TRUE(r.AwaitStarted(1));
  for (int i = 1; i <= 3; ++i) queue.Submit("a", r.Work("a" + std::to_string(i)), r.Refuse("a"));
  queue.Submit("b", r.Work("b1"), r.Refuse("b1"));
  queue.Submit("c", r.Work("c1"), r.Refuse("c1"));
  r.Open();
  ASSERT_TRUE(r.AwaitStarted(6));
  queue.Stop();
  // b and c came after a's backlog but run before any of it: the flows take turns.
  EXPECT_THAT(r.started(), ::testing::ElementsAre("a0", "b1", "c1", "a1", "a2", "a3"));
}

TEST(FairQueue, WhatWaitedTooLongOrWaitsAtStopIsRefused) {
  Recorder r;
  FakeClock clock;
  FairQueue queue({.workers = 1, .flow_concurrency = 1, .flow_queue = 10, .max_wait = 10s, .clock = &clock});
  queue.Submit("a", r.Work("a0"), r.Refuse("a0"));
  ASSERT_TRUE(r.AwaitStarted(1));
  queue.Submit("a", r.Work("late"), r.Refuse("late"));
  clock.Advance(11s);  // while a0 runs
  r.Open();
  queue.Stop();
  EXPECT_THAT(r.refused(), ::testing::ElementsAre("late"));

  Recorder s;
  FairQueue stopping({.workers = 1, .flow_concurrency = 1, .flow_queue = 10});
  stopping.Submit("a", s.Work("a0"), s.Refuse("a0"));
  ASSERT_TRUE(s.AwaitStarted(1));
  stopping.Submit("a", s.Work("waiting"), s.Refuse("waiting"));
  std::thread stopper([&] { stopping.Stop(); });
  ASSERT_TRUE(s.AwaitRefused(1));  // refused at once; what runs is waited for
  s.Open();
  stopper.join();
  EXPECT_THAT(s.refused(), ::testing::ElementsAre("waiting"));
  stopping.Submit("a", s.Work("after"), s.Refuse("after"));
  EXPECT_THAT(s.refused(), ::testing::ElementsAre("waiting", "after"));
}

}  // namespace
}  // namespace septa::vcp
