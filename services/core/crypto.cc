#include "services/core/crypto.h"

#include <openssl/evp.h>

#include <vector>

#include "services/base/base64.h"

namespace septa::core {

namespace {
constexpr char kHex[] = "0123456789abcdef";

std::string ToHex(const std::uint8_t* data, std::size_t n) {
  std::string out;
  out.reserve(n * 2);
  for (std::size_t i = 0; i < n; ++i) {
    out.push_back(kHex[data[i] >> 4]);
    out.push_back(kHex[data[i] & 0xf]);
  }
  return out;
}
}  // namespace

std::string Sha256Hex(std::string_view data) {
  std::uint8_t digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(data.data(), data.size(), digest, &len, EVP_sha256(), nullptr);
  return ToHex(digest, len);
}

std::string Sha256Base64Url(std::string_view data) {
  std::uint8_t digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(data.data(), data.size(), digest, &len, EVP_sha256(), nullptr);
  return base::Base64UrlEncode(std::string_view(reinterpret_cast<const char*>(digest), len));
}

Result<std::string> RandomBase64Url(RandomSource& random, std::size_t bytes) {
  std::string raw(bytes, '\0');
  SEPTA_RETURN_IF_ERROR(random.Fill(std::span(reinterpret_cast<std::uint8_t*>(raw.data()), raw.size())));
  return base::Base64UrlEncode(raw);
}

Result<std::string> RandomHex(RandomSource& random, std::size_t bytes) {
  std::vector<std::uint8_t> raw(bytes);
  SEPTA_RETURN_IF_ERROR(random.Fill(raw));
  return ToHex(raw.data(), raw.size());
}

}  // namespace septa::core
