// Time and randomness are injected so that tests are deterministic.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <random>
#include <span>
#include <stop_token>

namespace septa {

using TimePoint = std::chrono::system_clock::time_point;

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

// A clock that moves only when told to; sleepers wake when it passes their deadline.
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

// Source of secret and non-secret random bytes.
class RandomSource {
 public:
  virtual ~RandomSource() = default;
  virtual void Fill(std::span<std::uint8_t> out) = 0;
};

// Deterministic bytes for tests (never for secrets in production).
class SeededRandom final : public RandomSource {
 public:
  explicit SeededRandom(std::uint64_t seed) : gen_(seed) {}
  void Fill(std::span<std::uint8_t> out) override {
    std::lock_guard lock(mu_);
    for (auto& b : out) b = static_cast<std::uint8_t>(gen_());
  }

 private:
  std::mutex mu_;
  std::mt19937_64 gen_;
};

}  // namespace septa
