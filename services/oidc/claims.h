// The registered claims a verified token must carry (RFC 7519 §4.1, OpenID
// Connect Core §3.1.3.7) and the identity Septa reads from it. Pure: the
// time is passed in.
#pragma once

#include <chrono>
#include <cstddef>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/clock.h"
#include "common/status.h"

namespace septa::oidc {

struct ClaimChecks {
  std::string issuer;    // "iss" must equal it exactly
  std::string audience;  // "aud" (a string, or an array of strings) must contain it
  TimePoint now{};
  std::chrono::seconds leeway{60};   // clock skew allowed on exp, nbf and iat
  std::optional<std::string> nonce;  // set: "nonce" must equal it (a sign-in's ID token)
};

// kUnauthenticated naming the claim: "iss" not the issuer; "aud" missing or
// without the audience; "exp" missing, not a number, or at or before now -
// leeway; "nbf" after now + leeway; "iat" after now + leeway; "nonce" not
// the expected one. Numeric dates may be integers or fractions (RFC 7519
// §2) and must lie within TimePoint's range.
Status CheckClaims(const nlohmann::json& claims, const ClaimChecks& checks);

// A token's expiry ("exp"), once CheckClaims passed.
TimePoint ExpireTime(const nlohmann::json& claims);

// More groups than this and the token is refused (not cut: a cut list
// would drop groups silently and grant by the rest): identity providers
// cap their own groups claims far lower (Entra ID 200, Okta 100 by
// default).
inline constexpr std::size_t kMaxGroups = 1000;
// Longest user name, group name and subject, in bytes.
inline constexpr std::size_t kMaxNameBytes = 256;

struct Identity {
  std::string subject;              // "sub"; may be empty in a JWT access token without one
  std::string username;             // the username claim's value
  std::vector<std::string> groups;  // sorted, without duplicates
};

// kUnauthenticated naming the claim: the username claim missing, not a
// string, empty, longer than kMaxNameBytes, or holding a control character;
// "sub" (optional, may be empty) not a string, too long or holding a
// control character; the groups claim (optional; "" means none is read)
// not a string or an array of strings, with more than kMaxGroups entries,
// or with an entry that is empty, too long or holds a control character.
Result<Identity> ExtractIdentity(const nlohmann::json& claims, std::string_view username_claim,
                                 std::string_view groups_claim);

}  // namespace septa::oidc
