// JSON Web Signatures in compact serialization (RFC 7515), as OpenID
// Connect ID tokens and JWT access tokens (RFC 9068) carry them. Only the
// asymmetric algorithms identity providers sign with are accepted: RS256
// (RFC 7518 §3.3), ES256 (§3.4) and EdDSA over Ed25519 (RFC 8037). "none"
// and the HMAC family are refused before any key is looked at, so that an
// HS256 token "signed" with a provider's public key as its secret (the
// classic key-confusion attack) can never verify.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "common/status.h"

namespace septa::oidc {

enum class JwsAlgorithm { kRs256, kEs256, kEdDsa };
std::string_view AlgorithmName(JwsAlgorithm algorithm);  // "RS256", "ES256", "EdDSA"

// A token is refused unread past this size: an ID token with a few dozen
// groups is 1-4 KiB; 64 KiB leaves room for a large groups claim (which
// ExtractIdentity bounds by count) and stays far below the HTTP limits.
inline constexpr std::size_t kMaxTokenBytes = 64 * 1024;

struct Jws {
  JwsAlgorithm algorithm = JwsAlgorithm::kRs256;
  std::string key_id;         // the header's "kid"; empty when absent
  std::string type;           // the header's "typ" ("JWT", "at+jwt"); empty when absent
  std::string signing_input;  // ASCII(BASE64URL(header) || '.' || BASE64URL(payload))
  std::string signature;      // the decoded signature bytes (ES256: R || S, 64 bytes)
  nlohmann::json claims;      // the payload: a JSON object
};

// kUnauthenticated, its message naming what is wrong (for septad's log; a
// client is told less): longer than kMaxTokenBytes, not three base64url
// (unpadded) parts, a header or payload that is not a JSON object (parsed
// with common/documents.h's bounds), an "alg" other than the three above
// ("none", "HS256" and the like are named in the message), a "crit"
// header (no extension is understood, RFC 7515 §4.1.11), a "kid" or "typ"
// that is not a string, an empty signature.
Result<Jws> ParseJws(std::string_view compact);

}  // namespace septa::oidc
