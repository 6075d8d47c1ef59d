#include "services/base/base64.h"

#include <openssl/evp.h>

#include <algorithm>

namespace septa::base {
namespace {

bool IsStandardDigit(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '+' || c == '/';
}

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

// EVP_DecodeBlock accepts '=' anywhere and stray padding, so the shape is
// checked here: whole quads of digits, at most two '=' and only at the end.
std::optional<std::string> DecodePadded(const std::string& text) {
  if (text.size() % 4 != 0) return std::nullopt;
  const std::size_t digits = text.find_last_not_of('=') + 1;  // npos + 1 == 0
  const std::size_t padding = text.size() - digits;
  if (padding > 2 || !std::all_of(text.begin(), text.begin() + digits, IsStandardDigit)) return std::nullopt;
  std::string out(text.size() / 4 * 3, '\0');
  const int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                reinterpret_cast<const unsigned char*>(text.data()), static_cast<int>(text.size()));
  if (n < 0) return std::nullopt;
  out.resize(static_cast<std::size_t>(n) - padding);
  return out;
}

}  // namespace

std::string Base64Encode(std::string_view data) {
  std::string out((data.size() + 2) / 3 * 4 + 1, '\0');  // EVP_EncodeBlock writes a NUL
  const int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                reinterpret_cast<const unsigned char*>(data.data()), static_cast<int>(data.size()));
  out.resize(static_cast<std::size_t>(n));
  return out;
}

std::optional<std::string> Base64Decode(std::string_view text) {
  std::string compact;
  compact.reserve(text.size());
  for (char c : text) {
    if (!IsSpace(c)) compact.push_back(c);
  }
  return DecodePadded(compact);
}

std::string Base64UrlEncode(std::string_view data) {
  std::string out = Base64Encode(data);
  out.erase(out.find_last_not_of('=') + 1);
  std::replace(out.begin(), out.end(), '+', '-');
  std::replace(out.begin(), out.end(), '/', '_');
  return out;
}

std::optional<std::string> Base64UrlDecode(std::string_view text) {
  std::string standard(text);
  for (char& c : standard) {
    if (c == '+' || c == '/' || c == '=') return std::nullopt;  // not in the URL-safe alphabet
    if (c == '-') c = '+';
    if (c == '_') c = '/';
  }
  if (standard.size() % 4 == 1) return std::nullopt;  // no byte string encodes to this length
  standard.append((4 - standard.size() % 4) % 4, '=');
  return DecodePadded(standard);
}

}  // namespace septa::base
