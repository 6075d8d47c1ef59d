// The portal's sign-in: a browser session made from an API token (pasted, or
// redeemed once as a sign-in code), held by septad and presented by an
// HttpOnly cookie; the page never holds a token. Sessions and sign-in codes
// are rows of api_tokens (migrations/0019), so the Authenticator verifies,
// caches and forgets them as it does API tokens, and a session ends when the
// token it was made from is revoked or expires. A person who signs in at an
// identity provider gets a session of its own kind (person_sign_in.h), in
// the same cookie, with the same CSRF rule.
//
// A session's CSRF token is derived from its secret (HMAC-SHA256), so it is
// stored nowhere: only the holder of the cookie's value can compute it, and
// septad recomputes it from the cookie of each request.
#pragma once

#include <chrono>
#include <string>
#include <string_view>
#include <vector>

#include "common/clock.h"
#include "services/core/auth.h"
#include "services/core/store.h"

namespace septa::core {

// A portal session's resource in the audit: "sessions/<id>" (an API
// token's session or a person's).
inline std::string SessionResource(const std::string& id) { return "sessions/" + id; }

struct SessionLimits {
  // A session's lifetime; shorter when its API token expires earlier or the
  // tenant's trust tier caps credentials below it.
  std::chrono::seconds ttl = std::chrono::hours(12);
  // Live sessions one principal may hold: signing in once more revokes the
  // oldest (a browser that signs in again must not lock its user out).
  int live_max = 16;
  std::chrono::seconds sign_in_ttl = std::chrono::minutes(10);
  int sign_in_live_max = 8;  // live sign-in codes of one principal (then kResourceExhausted)
};

struct IssuedSession {
  ApiToken token;
  std::string cookie_value;  // the session's text; never stored
  std::string csrf_token;
};

struct IssuedSignInCode {
  ApiToken token;
  std::string code;  // one use, until token.expire_time
};

class SessionService {
 public:
  SessionService(Store& store, const Clock& clock, RandomSource& random, Authenticator& authenticator,
                 SessionLimits limits = {})
      : store_(store), clock_(clock), random_(random), authenticator_(authenticator), limits_(limits) {}

  // Signs in with an API token's text: kUnauthenticated as the token would
  // be refused as a bearer token.
  Result<IssuedSession> SignIn(std::string_view api_token, const std::string& request_id);
  // Signs in with a sign-in code, which is spent: a second use, or one after
  // its expiry, is kUnauthenticated.
  Result<IssuedSession> Redeem(std::string_view code, const std::string& request_id);
  // A one-time sign-in code for the principal of `ctx` (an API token's).
  Result<IssuedSignInCode> CreateSignInCode(const RequestContext& ctx);
  // Revokes the session `ctx` was authenticated by (signing out).
  Status SignOut(const RequestContext& ctx);

  // The CSRF token of the session whose cookie holds `cookie_value` (an
  // API token's session or a person's).
  static std::string CsrfToken(std::string_view cookie_value);

 private:
  // A session for `parent`'s principal and role, in `tx`.
  Result<IssuedSession> Issue(Tx& tx, const ApiToken& parent, const RequestContext& ctx,
                              std::vector<std::string>& ended);

  Store& store_;
  const Clock& clock_;
  RandomSource& random_;
  Authenticator& authenticator_;
  const SessionLimits limits_;
};

}  // namespace septa::core
