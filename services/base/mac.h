// Message authentication on OpenSSL: HMAC-SHA256 and the comparison its
// checks need. In base, not core, because the simulators (kubesim signs
// service account tokens with it) may not depend on core.
#pragma once

#include <string>
#include <string_view>

namespace septa::base {

// HMAC-SHA256 of `data` under `key`, the raw 32 bytes.
std::string HmacSha256(std::string_view key, std::string_view data);

// Comparison whose time does not depend on where the inputs differ.
bool ConstantTimeEquals(std::string_view a, std::string_view b);

}  // namespace septa::base
