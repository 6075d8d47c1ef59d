// A person's portal session (docs/identity.md "The portal"): signed in by
// the authorization code flow with PKCE at one of oidc_issuers, held by
// septad, presented by the portal's HttpOnly cookie as an API token's
// session is. What septad keeps of the sign-in under way, and of the
// session: the person's identity as its latest ID token named it, and the
// provider's refresh token, with which septad renews that identity when
// the ID token expires (so a session does not drop mid-task while the
// provider still allows it, and a group removed at the provider ends
// there at the next renewal).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/clock.h"

namespace septa::core {

// A sign-in under way, from the redirect to the provider until its
// callback: used once, for minutes. Keyed by the SHA-256 of the `state`
// sent to the provider; bound to the browser that began it by the SHA-256
// of a cookie set on it then.
struct PendingSignIn {
  std::string state_hash{};  // hex
  std::string issuer{};
  std::string browser_hash{};   // hex
  std::string code_verifier{};  // PKCE (RFC 7636), S256
  std::string nonce{};
  std::string return_to{};  // a path of the portal
  // The address it was begun from: anyone may begin sign-ins, so each
  // address may have only a few under way (PersonSignInLimits).
  std::string client{};
  TimePoint create_time{};
  TimePoint expire_time{};
};

struct PersonSession {
  std::string id{};           // 16 hex digits, as a token's
  std::string secret_hash{};  // SHA-256 of the cookie's secret, hex
  std::string issuer{};
  std::string user{};
  std::vector<std::string> groups{};  // sorted, unique, at most kMaxMemberGroups
  // The latest ID token's "exp": the identity is renewed after it.
  TimePoint identity_expire_time{};
  std::string id_token{};       // the latest: the id_token_hint of the sign-out
  std::string refresh_token{};  // empty: the provider issued none
  std::int64_t version = 0;     // bumped by each renewal (UpdateIdentity)
  TimePoint create_time{};
  TimePoint expire_time{};
  std::optional<TimePoint> revoke_time{};
};

}  // namespace septa::core
