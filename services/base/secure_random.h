// The production RandomSource: OpenSSL's RAND_bytes.
#pragma once

#include "common/clock.h"

namespace septa::base {

// Cryptographically secure bytes; UNAVAILABLE when OpenSSL has no entropy.
class SecureRandom final : public RandomSource {
 public:
  Status Fill(std::span<std::uint8_t> out) override;
};

}  // namespace septa::base
