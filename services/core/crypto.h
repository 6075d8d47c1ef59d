// Secrets and digests for API tokens and idempotency fingerprints (OpenSSL);
// HMAC and constant-time comparison are in services/base/mac.h.
#pragma once

#include <string>
#include <string_view>

#include "common/clock.h"

namespace septa::core {

// Lower-case hex SHA-256 of `data`.
std::string Sha256Hex(std::string_view data);
// SHA-256 of `data` as unpadded base64url: a PKCE S256 code challenge (RFC 7636 4.2).
std::string Sha256Base64Url(std::string_view data);

// `bytes` random bytes as unpadded base64url; fails when `random` does.
Result<std::string> RandomBase64Url(RandomSource& random, std::size_t bytes);

// `bytes` random bytes as lower-case hex; fails when `random` does.
Result<std::string> RandomHex(RandomSource& random, std::size_t bytes);

}  // namespace septa::core
