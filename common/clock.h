// Time and randomness are injected so that tests are deterministic. Production
// implementations: SystemClock here, base::SecureRandom (services/base); test
// doubles: tests/support/fake_clock.h and tests/support/seeded_random.h.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <span>
#include <stop_token>

#include "common/status.h"
#include "common/time_point.h"

namespace septa {

class Clock {
 public:
  virtual ~Clock() = default;
  virtual TimePoint Now() const = 0;
  // Blocks until Now() reaches `deadline` or a stop is requested; true iff
  // the deadline came (and no stop was requested).
  virtual bool SleepUntil(TimePoint deadline, std::stop_token stop) const = 0;
};

class SystemClock final : public Clock {
 public:
  TimePoint Now() const override { return std::chrono::system_clock::now(); }
  bool SleepUntil(TimePoint deadline, std::stop_token stop) const override {
    std::mutex mu;
    std::condition_variable_any woken;
    std::unique_lock lock(mu);
    woken.wait_until(lock, stop, deadline, [] { return false; });
    return !stop.stop_requested();
  }
};

// Source of secret and non-secret random bytes. Fails when the operating system
// has no entropy to give; `out` is then unusable.
class RandomSource {
 public:
  virtual ~RandomSource() = default;
  virtual Status Fill(std::span<std::uint8_t> out) = 0;
};

}  // namespace septa
