// Secrets and digests for API tokens and idempotency fingerprints (OpenSSL).
#pragma once

#include <string>
#include <string_view>

#include "common/clock.h"

namespace septa::core {

// Lower-case hex SHA-256 of `data`.
std::string Sha256Hex(std::string_view data);

// HMAC-SHA256 of `data` under `key`, the raw 32 bytes.
std::string HmacSha256(std::string_view key, std::string_view data);

// `bytes` random bytes as unpadded base64url; fails when `random` does.
Result<std::string> RandomBase64Url(RandomSource& random, std::size_t bytes);

// `bytes` random bytes as lower-case hex; fails when `random` does.
Result<std::string> RandomHex(RandomSource& random, std::size_t bytes);

// Comparison whose time does not depend on where the inputs differ.
bool ConstantTimeEquals(std::string_view a, std::string_view b);

}  // namespace septa::core
