// Bounds for blocking calls in tests: a broken runtime fails the test after
// the bound instead of hanging it. Never a pause: a working runtime returns
// as soon as the event happens.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <stop_token>
#include <thread>

namespace septa::reconcile::testing {

// How long a test waits for an event before it fails: for a broken runtime;
// a working one answers at once.
inline constexpr std::chrono::seconds kBound{10};

// A stop token that fires after `bound` of real time (or when destroyed).
class StopAfter {
 public:
  explicit StopAfter(std::chrono::milliseconds bound)
      : timer_([this, bound](std::stop_token cancelled) {
          std::mutex mu;
          std::condition_variable_any never;
          std::unique_lock lock(mu);
          never.wait_for(lock, cancelled, bound, [] { return false; });
          stop_.request_stop();
        }) {}
  std::stop_token token() const { return stop_.get_token(); }

 private:
  std::stop_source stop_;
  std::jthread timer_;  // last: stop_ exists before it runs
};

}  // namespace septa::reconcile::testing
