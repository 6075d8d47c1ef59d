// Time and randomness are injected so that tests are deterministic. Production
// implementations: SystemClock here, base::SecureRandom (services/base); test
// doubles: tests/support/fake_clock.h and tests/support/seeded_random.h.
#pragma once

#include <chrono>
#include <cstdint>
#include <span>

#include "common/status.h"

namespace septa {

using TimePoint = std::chrono::system_clock::time_point;

class Clock {
 public:
  virtual ~Clock() = default;
  virtual TimePoint Now() const = 0;
};

class SystemClock final : public Clock {
 public:
  TimePoint Now() const override { return std::chrono::system_clock::now(); }
};

// Source of secret and non-secret random bytes. Fails when the operating system
// has no entropy to give; `out` is then unusable.
class RandomSource {
 public:
  virtual ~RandomSource() = default;
  virtual Status Fill(std::span<std::uint8_t> out) = 0;
};

}  // namespace septa
