// A clock that moves only when told to; sleepers wake when it passes their
// deadline (tests only).
#pragma once

#include <condition_variable>
#include <mutex>

#include "common/clock.h"

namespace septa {

class FakeClock final : public Clock {
 public:
  explicit FakeClock(TimePoint start = TimePoint(std::chrono::seconds(1'800'000'000))) : now_(start) {}
  TimePoint Now() const override {
    std::lock_guard lock(mu_);
    return now_;
  }
  bool SleepUntil(TimePoint deadline, std::stop_token stop) const override {
    std::unique_lock lock(mu_);
    return moved_.wait(lock, stop, [&] { return now_ >= deadline; });
  }
  void Advance(std::chrono::nanoseconds d) {
    std::lock_guard lock(mu_);
    now_ += std::chrono::duration_cast<TimePoint::duration>(d);
    moved_.notify_all();
  }
  void Set(TimePoint t) {
    std::lock_guard lock(mu_);
    now_ = t;
    moved_.notify_all();
  }

 private:
  mutable std::mutex mu_;
  mutable std::condition_variable_any moved_;
  TimePoint now_;
};

}  // namespace septa
