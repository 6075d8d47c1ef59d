#include "services/core/crypto.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>

#include <vector>

namespace septa::core {

namespace {
constexpr char kHex[] = "0123456789abcdef";
constexpr char kBase64Url[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

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

std::string Base64UrlEncode(std::string_view data) {
  std::string out;
  out.reserve((data.size() * 4 + 2) / 3);
  std::uint32_t acc = 0;
  int bits = 0;
  for (unsigned char b : data) {
    acc = (acc << 8) | b;
    bits += 8;
    while (bits >= 6) {
      bits -= 6;
      out.push_back(kBase64Url[(acc >> bits) & 0x3f]);
    }
  }
  if (bits > 0) out.push_back(kBase64Url[(acc << (6 - bits)) & 0x3f]);
  return out;
}

std::optional<std::string> Base64UrlDecode(std::string_view text) {
  std::string out;
  std::uint32_t acc = 0;
  int bits = 0;
  for (char c : text) {
    const char* p = std::char_traits<char>::find(kBase64Url, 64, c);
    if (p == nullptr) return std::nullopt;
    acc = (acc << 6) | static_cast<std::uint32_t>(p - kBase64Url);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((acc >> bits) & 0xff));
    }
  }
  return out;
}

Result<std::string> RandomBase64Url(RandomSource& random, std::size_t bytes) {
  std::string raw(bytes, '\0');
  SEPTA_RETURN_IF_ERROR(random.Fill(std::span(reinterpret_cast<std::uint8_t*>(raw.data()), raw.size())));
  return Base64UrlEncode(raw);
}

Result<std::string> RandomHex(RandomSource& random, std::size_t bytes) {
  std::vector<std::uint8_t> raw(bytes);
  SEPTA_RETURN_IF_ERROR(random.Fill(raw));
  return ToHex(raw.data(), raw.size());
}

bool ConstantTimeEquals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  return CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

}  // namespace septa::core
