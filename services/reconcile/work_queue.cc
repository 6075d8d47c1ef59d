#include "services/reconcile/work_queue.h"

#include <algorithm>

namespace septa::reconcile {

WorkQueue::WorkQueue(const Clock& clock, WorkQueueOptions options)
    : clock_(clock),
      options_(std::move(options)),
      tokens_(options_.overall_burst),
      tokens_time_(clock.Now()),
      delays_([this](std::stop_token stop) { RunDelays(stop); }) {}

WorkQueue::~WorkQueue() { ShutDown(); }

void WorkQueue::Add(const std::string& key, Priority priority) {
  std::lock_guard lock(mu_);
  AddLocked(key, priority);
}

void WorkQueue::AddLocked(const std::string& key, Priority priority) {
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

void WorkQueue::AddAfter(const std::string& key, std::chrono::nanoseconds delay) {
  std::lock_guard lock(mu_);
  AddAfterLocked(key, delay);
}

void WorkQueue::AddAfterLocked(const std::string& key, std::chrono::nanoseconds delay) {
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

void WorkQueue::AddRateLimited(const std::string& key) {
  std::lock_guard lock(mu_);
  if (shutting_down_) return;
  AddAfterLocked(key, BackoffLocked(key));
}

std::chrono::nanoseconds WorkQueue::BackoffLocked(const std::string& key) {
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

void WorkQueue::Forget(const std::string& key) {
  std::lock_guard lock(mu_);
  failures_.erase(key);
}

int WorkQueue::NumRequeues(const std::string& key) const {
  std::lock_guard lock(mu_);
  auto it = failures_.find(key);
  return it == failures_.end() ? 0 : it->second;
}

std::optional<std::string> WorkQueue::Get(std::stop_token stop) {
  std::unique_lock lock(mu_);
  ready_.wait(lock, stop, [&] { return ReadyLocked() > 0 || shutting_down_; });
  if (shutting_down_ || ReadyLocked() == 0) return std::nullopt;
  std::string key;
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

void WorkQueue::Done(const std::string& key) {
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

bool WorkQueue::IdleLocked() const {
  return ReadyLocked() == 0 && processing_.empty() && (by_time_.empty() || by_time_.begin()->first > clock_.Now());
}

bool WorkQueue::AwaitIdle(std::chrono::milliseconds timeout) const {
  std::unique_lock lock(mu_);
  idle_.wait_for(lock, timeout, [&] { return shutting_down_ || IdleLocked(); });
  return IdleLocked();
}

std::size_t WorkQueue::Len() const {
  std::lock_guard lock(mu_);
  return ReadyLocked();
}

std::size_t WorkQueue::Waiting() const {
  std::lock_guard lock(mu_);
  return waiting_.size();
}

void WorkQueue::ShutDown() {
  std::lock_guard lock(mu_);
  shutting_down_ = true;
  sleep_.request_stop();
  ready_.notify_all();
  waiter_.notify_all();
  idle_.notify_all();
}

bool WorkQueue::ShuttingDown() const {
  std::lock_guard lock(mu_);
  return shutting_down_;
}

void WorkQueue::PublishDepthLocked() {
  if (options_.on_depth) options_.on_depth(ReadyLocked());
}

void WorkQueue::RunDelays(std::stop_token stop) {
  std::unique_lock lock(mu_);
  while (!stop.stop_requested() && !shutting_down_) {
    if (by_time_.empty()) {
      waiter_.wait(lock, stop, [&] { return !by_time_.empty() || shutting_down_; });
      continue;
    }
    const TimePoint now = clock_.Now();
    while (!by_time_.empty() && by_time_.begin()->first <= now) {
      const std::string key = by_time_.begin()->second;
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
