// The work queue of a controller, after client-go's workqueue: keys (object
// names), not events, are queued, so that a burst of changes to one object
// costs one reconcile. A key is any regular, totally ordered value type
// (reconcile/key.h): a node name, a tenancy::VirtualClusterRef, the
// syncer's SyncerKey; the tests use strings.
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

#include <algorithm>
#include <chrono>
#include <concepts>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <stop_token>
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

// What a queue may hold: copied into its sets and maps, compared for identity.
template <class Key>
concept QueueKey = std::copyable<Key> && std::totally_ordered<Key>;

template <QueueKey Key>
class WorkQueue {
 public:
  WorkQueue(const Clock& clock, WorkQueueOptions options = {});
  ~WorkQueue();  // shuts down and joins the delay thread
  WorkQueue(const WorkQueue&) = delete;
  WorkQueue& operator=(const WorkQueue&) = delete;

  void Add(const Key& key, Priority priority = Priority::kNormal);
  void AddAfter(const Key& key, std::chrono::nanoseconds delay);
  void AddRateLimited(const Key& key);
  void Forget(const Key& key);
  // How many AddRateLimited the key had since its last Forget.
  int NumRequeues(const Key& key) const;

  // Blocks until a key is ready (the caller then processes it and must call
  // Done), the queue shuts down or `stop` is requested (then nullopt).
  std::optional<Key> Get(std::stop_token stop = {});
  void Done(const Key& key);

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
  void AddLocked(const Key& key, Priority priority = Priority::kNormal);
  std::size_t ReadyLocked() const { return queue_.size() + low_queued_.size(); }
  void AddAfterLocked(const Key& key, std::chrono::nanoseconds delay);
  void PublishDepthLocked();
  bool IdleLocked() const;
  std::chrono::nanoseconds BackoffLocked(const Key& key);
  void RunDelays(std::stop_token stop);

  const Clock& clock_;
  const WorkQueueOptions options_;

  mutable std::mutex mu_;
  std::condition_variable_any ready_;         // Get waits here
  std::condition_variable_any waiter_;        // the delay thread waits here for keys to wait for
  mutable std::condition_variable_any idle_;  // AwaitIdle waits here
  std::deque<Key> queue_;
  // Low-priority keys ready, in order: low_ may hold stale entries (a key
  // moved ahead, or handed out already); low_queued_ says which are not.
  std::deque<Key> low_;
  std::set<Key> low_queued_;
  std::set<Key> dirty_;        // queued, or to be queued again after Done
  std::set<Key> requeue_low_;  // dirty while handed out, re-added at kLow only
  std::set<Key> processing_;   // handed out, not yet Done
  std::map<Key, TimePoint> waiting_;
  std::multimap<TimePoint, Key> by_time_;  // waiting_, ordered by time
  std::map<Key, int> failures_;
  double tokens_ = 0;
  TimePoint tokens_time_{};
  bool shutting_down_ = false;
  // Cuts the delay thread's current sleep short: an earlier key arrived, or shut down.
  std::stop_source sleep_;
  std::jthread delays_;  // last: starts once everything above is built
};

// Definitions (a template: in the header).
template <QueueKey Key>
WorkQueue<Key>::WorkQueue(const Clock& clock, WorkQueueOptions options)
    : clock_(clock),
      options_(std::move(options)),
      tokens_(options_.overall_burst),
      tokens_time_(clock.Now()),
      delays_([this](std::stop_token stop) { RunDelays(stop); }) {}

template <QueueKey Key>
WorkQueue<Key>::~WorkQueue() {
  ShutDown();
}

template <QueueKey Key>
void WorkQueue<Key>::Add(const Key& key, Priority priority) {
  std::lock_guard lock(mu_);
  AddLocked(key, priority);
}

template <QueueKey Key>
void WorkQueue<Key>::AddLocked(const Key& key, Priority priority) {
  if (shutting_down_) return;
  const bool low = priority == Priority::kLow;
  if (processing_.contains(key)) {  // Done queues it again, at the highest priority asked for
    if (dirty_.insert(key).second) {
      if (low) requeue_low_.insert(key);
    } else if (!low) {
      requeue_low_.erase(key);
    }
    return;
  }
  if (dirty_.contains(key)) {  // ready already: moved ahead when asked for at normal priority
    if (low || low_queued_.erase(key) == 0) return;
    if (low_queued_.empty()) low_.clear();
    queue_.push_back(key);
  } else {
    dirty_.insert(key);
    if (low) {
      low_.push_back(key);
      low_queued_.insert(key);
    } else {
      queue_.push_back(key);
    }
  }
  PublishDepthLocked();
  ready_.notify_one();
}

template <QueueKey Key>
void WorkQueue<Key>::AddAfter(const Key& key, std::chrono::nanoseconds delay) {
  std::lock_guard lock(mu_);
  AddAfterLocked(key, delay);
}

template <QueueKey Key>
void WorkQueue<Key>::AddAfterLocked(const Key& key, std::chrono::nanoseconds delay) {
  if (shutting_down_) return;
  if (delay <= std::chrono::nanoseconds::zero()) {
    AddLocked(key);
    return;
  }
  // Capped so that Now() + delay cannot overflow; a year is "not soon" enough.
  const auto capped = std::min<std::chrono::nanoseconds>(delay, std::chrono::hours(24 * 365));
  const TimePoint when = clock_.Now() + std::chrono::duration_cast<TimePoint::duration>(capped);
  if (auto it = waiting_.find(key); it != waiting_.end()) {
    if (it->second <= when) return;  // it comes earlier already
    auto [first, last] = by_time_.equal_range(it->second);
    by_time_.erase(std::find_if(first, last, [&](const auto& entry) { return entry.second == key; }));
    it->second = when;
  } else {
    waiting_.emplace(key, when);
  }
  by_time_.emplace(when, key);
  // The delay thread may sleep towards a later time: have it look again.
  if (by_time_.begin()->first == when) sleep_.request_stop();
  waiter_.notify_one();
}

template <QueueKey Key>
void WorkQueue<Key>::AddRateLimited(const Key& key) {
  std::lock_guard lock(mu_);
  if (shutting_down_) return;
  AddAfterLocked(key, BackoffLocked(key));
}

template <QueueKey Key>
std::chrono::nanoseconds WorkQueue<Key>::BackoffLocked(const Key& key) {
  const int failures = failures_[key]++;
  std::chrono::nanoseconds delay = options_.base_delay;
  for (int i = 0; i < failures && delay < options_.max_delay; ++i) delay *= 2;
  delay = std::min<std::chrono::nanoseconds>(delay, options_.max_delay);
  if (options_.overall_rate_per_second > 0) {
    // A token bucket refilled at the rate, holding at most `burst`; a key
    // that finds it empty borrows the next token and waits for it.
    const TimePoint now = clock_.Now();
    const double elapsed = std::chrono::duration<double>(now - tokens_time_).count();
    tokens_ =
        std::min<double>(options_.overall_burst, tokens_ + std::max(0.0, elapsed) * options_.overall_rate_per_second);
    tokens_time_ = std::max(now, tokens_time_);
    tokens_ -= 1;
    if (tokens_ < 0) {
      const auto bucket_delay = std::chrono::duration_cast<std::chrono::nanoseconds>(
          std::chrono::duration<double>(-tokens_ / options_.overall_rate_per_second));
      delay = std::max(delay, bucket_delay);
    }
  }
  return delay;
}

template <QueueKey Key>
void WorkQueue<Key>::Forget(const Key& key) {
  std::lock_guard lock(mu_);
  failures_.erase(key);
}

template <QueueKey Key>
int WorkQueue<Key>::NumRequeues(const Key& key) const {
  std::lock_guard lock(mu_);
  auto it = failures_.find(key);
  return it == failures_.end() ? 0 : it->second;
}

template <QueueKey Key>
std::optional<Key> WorkQueue<Key>::Get(std::stop_token stop) {
  std::unique_lock lock(mu_);
  ready_.wait(lock, stop, [&] { return ReadyLocked() > 0 || shutting_down_; });
  if (shutting_down_ || ReadyLocked() == 0) return std::nullopt;
  Key key;
  if (!queue_.empty()) {
    key = std::move(queue_.front());
    queue_.pop_front();
  } else {
    do {  // skips the stale entries
      key = std::move(low_.front());
      low_.pop_front();
    } while (low_queued_.erase(key) == 0);
    if (low_queued_.empty()) low_.clear();
  }
  processing_.insert(key);
  dirty_.erase(key);
  PublishDepthLocked();
  return key;
}

template <QueueKey Key>
void WorkQueue<Key>::Done(const Key& key) {
  std::lock_guard lock(mu_);
  processing_.erase(key);
  if (shutting_down_ || !dirty_.contains(key)) {
    if (IdleLocked()) idle_.notify_all();
    return;
  }
  if (requeue_low_.erase(key) > 0) {  // added again while it was being processed
    low_.push_back(key);
    low_queued_.insert(key);
  } else {
    queue_.push_back(key);
  }
  PublishDepthLocked();
  ready_.notify_one();
}

template <QueueKey Key>
bool WorkQueue<Key>::IdleLocked() const {
  return ReadyLocked() == 0 && processing_.empty() && (by_time_.empty() || by_time_.begin()->first > clock_.Now());
}

template <QueueKey Key>
bool WorkQueue<Key>::AwaitIdle(std::chrono::milliseconds timeout) const {
  std::unique_lock lock(mu_);
  idle_.wait_for(lock, timeout, [&] { return shutting_down_ || IdleLocked(); });
  return IdleLocked();
}

template <QueueKey Key>
std::size_t WorkQueue<Key>::Len() const {
  std::lock_guard lock(mu_);
  return ReadyLocked();
}

template <QueueKey Key>
std::size_t WorkQueue<Key>::Waiting() const {
  std::lock_guard lock(mu_);
  return waiting_.size();
}

template <QueueKey Key>
void WorkQueue<Key>::ShutDown() {
  std::lock_guard lock(mu_);
  shutting_down_ = true;
  sleep_.request_stop();
  ready_.notify_all();
  waiter_.notify_all();
  idle_.notify_all();
}

template <QueueKey Key>
bool WorkQueue<Key>::ShuttingDown() const {
  std::lock_guard lock(mu_);
  return shutting_down_;
}

template <QueueKey Key>
void WorkQueue<Key>::PublishDepthLocked() {
  if (options_.on_depth) options_.on_depth(ReadyLocked());
}

template <QueueKey Key>
void WorkQueue<Key>::RunDelays(std::stop_token stop) {
  std::unique_lock lock(mu_);
  while (!stop.stop_requested() && !shutting_down_) {
    if (by_time_.empty()) {
      waiter_.wait(lock, stop, [&] { return !by_time_.empty() || shutting_down_; });
      continue;
    }
    const TimePoint now = clock_.Now();
    while (!by_time_.empty() && by_time_.begin()->first <= now) {
      const Key key = by_time_.begin()->second;
      by_time_.erase(by_time_.begin());
      waiting_.erase(key);
      AddLocked(key);
    }
    if (by_time_.empty()) continue;
    const TimePoint deadline = by_time_.begin()->first;
    if (sleep_.stop_requested()) sleep_ = std::stop_source();
    std::stop_token cut_short = sleep_.get_token();
    lock.unlock();
    (void)clock_.SleepUntil(deadline, cut_short);  // either way, look again
    lock.lock();
  }
}

}  // namespace septa::reconcile
