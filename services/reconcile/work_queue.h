// The work queue of a controller, after client-go's workqueue: keys (object
// names), not events, are queued, so that a burst of changes to one object
// costs one reconcile.
//
//  - De-duplicating: a key added while it waits is queued once; a key added
//    while a worker processes it is queued again, once, when that worker
//    calls Done, so no two workers ever hold the same key.
//  - Delayed: AddAfter(key, d) makes the key ready at Now() + d of the
//    injected clock (a background thread waits with Clock::SleepUntil, so a
//    FakeClock's Advance releases it). A key already waiting keeps the
//    earlier of its two times.
//  - Rate-limited: AddRateLimited(key) delays by the key's exponential
//    backoff, base_delay * 2^(failures so far) capped at max_delay, and, if
//    an overall rate is set, at least as long as a token bucket shared by
//    all keys (rate per second, burst) needs to hand out a token. Forget(key)
//    resets the key's backoff (call it when the key succeeded).
//  - Prioritised: a key added at Priority::kLow (a periodic resync's sweep
//    of every object) is handed out only when no normal key is ready, so a
//    sweep of thousands never delays what an event asked for; adding a
//    waiting low key at kNormal moves it ahead (controller-runtime's
//    priority queue does the same for its initial lists and resyncs).
//  - ShutDown: Get returns nullopt from then on (keys still queued are not
//    handed out: reconcilers are level-based, the next start lists
//    everything again) and adds are ignored.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <stop_token>
#include <string>
#include <thread>

#include "common/clock.h"

namespace septa::reconcile {

struct WorkQueueOptions {
  std::chrono::milliseconds base_delay{100};        // the first AddRateLimited of a key
  std::chrono::milliseconds max_delay{5 * 60'000};  // the backoff doubles up to this
  // Token bucket over every AddRateLimited, whatever the key: 0 = no limit.
  double overall_rate_per_second = 0;
  int overall_burst = 1;
  // Told the number of ready keys each time it changes (a queue-depth gauge);
  // runs under the queue's lock, so it must be quick and must not call back.
  std::function<void(std::size_t)> on_depth{};
};

enum class Priority { kNormal, kLow };

class WorkQueue {
 public:
  WorkQueue(const Clock& clock, WorkQueueOptions options = {});
  ~WorkQueue();  // shuts down and joins the delay thread
  WorkQueue(const WorkQueue&) = delete;
  WorkQueue& operator=(const WorkQueue&) = delete;

  void Add(const std::string& key, Priority priority = Priority::kNormal);
  void AddAfter(const std::string& key, std::chrono::nanoseconds delay);
  void AddRateLimited(const std::string& key);
  void Forget(const std::string& key);
  // How many AddRateLimited the key had since its last Forget.
  int NumRequeues(const std::string& key) const;

  // Blocks until a key is ready (the caller then processes it and must call
  // Done), the queue shuts down or `stop` is requested (then nullopt).
  std::optional<std::string> Get(std::stop_token stop = {});
  void Done(const std::string& key);

  // Waits (at most `timeout`) until no key is ready, handed out, or waiting
  // for a time already come: everything due has been processed. For
  // start-up, benchmarks and tests; false on timeout.
  bool AwaitIdle(std::chrono::milliseconds timeout) const;

  std::size_t Len() const;      // keys ready to be handed out, of either priority
  std::size_t Waiting() const;  // keys waiting for their AddAfter time
  void ShutDown();
  bool ShuttingDown() const;

 private:
  // With mu_ held:
  void AddLocked(const std::string& key, Priority priority = Priority::kNormal);
  std::size_t ReadyLocked() const { return queue_.size() + low_queued_.size(); }
  void AddAfterLocked(const std::string& key, std::chrono::nanoseconds delay);
  void PublishDepthLocked();
  bool IdleLocked() const;
  std::chrono::nanoseconds BackoffLocked(const std::string& key);
  void RunDelays(std::stop_token stop);

  const Clock& clock_;
  const WorkQueueOptions options_;

  mutable std::mutex mu_;
  std::condition_variable_any ready_;         // Get waits here
  std::condition_variable_any waiter_;        // the delay thread waits here for keys to wait for
  mutable std::condition_variable_any idle_;  // AwaitIdle waits here
  std::deque<std::string> queue_;
  // Low-priority keys ready, in order: low_ may hold stale entries (a key
  // moved ahead, or handed out already); low_queued_ says which are not.
  std::deque<std::string> low_;
  std::set<std::string> low_queued_;
  std::set<std::string> dirty_;        // queued, or to be queued again after Done
  std::set<std::string> requeue_low_;  // dirty while handed out, re-added at kLow only
  std::set<std::string> processing_;   // handed out, not yet Done
  std::map<std::string, TimePoint> waiting_;
  std::multimap<TimePoint, std::string> by_time_;  // waiting_, ordered by time
  std::map<std::string, int> failures_;
  double tokens_ = 0;
  TimePoint tokens_time_{};
  bool shutting_down_ = false;
  // Cuts the delay thread's current sleep short: an earlier key arrived, or shut down.
  std::stop_source sleep_;
  std::jthread delays_;  // last: starts once everything above is built
};

}  // namespace septa::reconcile
