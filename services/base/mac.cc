#include "services/base/mac.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <cstdint>

namespace septa::base {

std::string HmacSha256(std::string_view key, std::string_view data) {
  std::uint8_t digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()), reinterpret_cast<const std::uint8_t*>(data.data()),
       data.size(), digest, &len);
  return std::string(reinterpret_cast<const char*>(digest), len);
}

bool ConstantTimeEquals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  return CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

}  // namespace septa::base
