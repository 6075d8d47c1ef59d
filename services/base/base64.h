// Base64 (RFC 4648) on OpenSSL's EVP_EncodeBlock / EVP_DecodeBlock, strict on
// input: the only home of base64 in Septa.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace septa::base {

// Standard alphabet with '=' padding (section 4), as kubeconfig *-data fields.
std::string Base64Encode(std::string_view data);
// nullopt unless `text` is padded standard base64; ASCII whitespace (line
// breaks of a folded YAML scalar) is ignored.
std::optional<std::string> Base64Decode(std::string_view text);

// URL-safe alphabet without padding (section 5), as tokens and page tokens.
std::string Base64UrlEncode(std::string_view data);
// nullopt unless `text` is unpadded base64url.
std::optional<std::string> Base64UrlDecode(std::string_view text);

}  // namespace septa::base
