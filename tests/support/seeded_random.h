// Deterministic bytes for tests (never for secrets), and a source that fails.
#pragma once

#include <mutex>
#include <random>

#include "common/clock.h"

namespace septa {

class SeededRandom final : public RandomSource {
 public:
  explicit SeededRandom(std::uint64_t seed) : gen_(seed) {}
  Status Fill(std::span<std::uint8_t> out) override {
    std::lock_guard lock(mu_);
    for (auto& b : out) b = static_cast<std::uint8_t>(gen_());
    return Status::Ok();
  }

 private:
  std::mutex mu_;
  std::mt19937_64 gen_;
};

// A random source whose entropy has run out, as RAND_bytes reports it.
class ExhaustedRandom final : public RandomSource {
 public:
  Status Fill(std::span<std::uint8_t>) override { return Unavailable("no secure randomness available"); }
};

}  // namespace septa
