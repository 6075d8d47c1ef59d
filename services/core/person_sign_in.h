// People sign in to the portal (docs/identity.md "The portal"): the
// authorization code flow with PKCE (RFC 7636) run by septad, a
// confidential client, so the browser never holds a provider's token; the
// session is septad's (core/person_session.h), presented by the portal's
// HttpOnly cookie as an API token's session is (session_service.h).
//
// Begin keeps the flow's state, PKCE verifier and nonce in the store (any
// replica may take the callback) and binds them to the browser by a
// cookie; Finish spends them once, redeems the code, verifies the ID token
// (signature, audience, nonce) and opens the session. Authenticate renews
// the session's identity with the provider's refresh token once its ID
// token has expired: a person removed from a group loses what the group
// gave at that renewal, a person the provider no longer signs in loses the
// session, and while the provider cannot be reached the session lives on
// with the identity it has, until its own expiry.
#pragma once

#include <array>
#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "common/clock.h"
#include "common/status.h"
#include "services/core/auth.h"
#include "services/core/people.h"
#include "services/core/person_session.h"
#include "services/core/store.h"

namespace septa::core {

// A provider people sign in to the portal with (an oidc_issuers entry
// with the portal's client: client_id and client_secret_file).
struct SignInProviderInfo {
  std::string issuer{};
  std::string name{};  // shown on the sign-in page's button
};

struct AuthorizationRequest {
  std::string redirect_uri{};
  std::string state{};
  std::string nonce{};
  std::string code_challenge{};  // S256 of the verifier
};

struct ProviderTokens {
  std::string id_token{};
  std::string refresh_token{};  // empty: none issued (a renewal that gives none keeps the old one)
};

// The portal's client at each provider (services/oidc implements it).
// Errors: kInvalidArgument for an issuer that signs no one in to the
// portal; kUnavailable when the provider cannot be reached; kUnauthenticated
// when it refuses a code or a refresh token.
class SignInProviders {
 public:
  virtual ~SignInProviders() = default;
  virtual std::vector<SignInProviderInfo> List() const = 0;
  // The provider's authorization endpoint with the request's parameters.
  virtual Result<std::string> AuthorizationUrl(const std::string& issuer, const AuthorizationRequest& request) = 0;
  virtual Result<ProviderTokens> RedeemCode(const std::string& issuer, const std::string& code,
                                            const std::string& code_verifier, const std::string& redirect_uri) = 0;
  virtual Result<ProviderTokens> Refresh(const std::string& issuer, const std::string& refresh_token) = 0;
  // RFC 7009, where the provider offers it (OK when it does not).
  virtual Status RevokeRefreshToken(const std::string& issuer, const std::string& refresh_token) = 0;
  // The provider's RP-initiated logout URL for a session that signed in
  // with `id_token`; empty when it has no end_session_endpoint.
  virtual Result<std::string> EndSessionUrl(const std::string& issuer, const std::string& id_token,
                                            const std::string& post_logout_redirect_uri) = 0;
};

struct PersonSignInLimits {
  std::chrono::seconds session_ttl = std::chrono::hours(12);  // however often the identity is renewed
  int live_max = 16;                                          // live sessions of one person: a new one ends the oldest
  std::chrono::seconds sign_in_ttl = std::chrono::minutes(10);
  // Sign-ins under way: anyone may begin one, so they are bounded per
  // address (one host flooding takes no one else's) and in all
  // (kResourceExhausted past either).
  int pending_per_client_max = 32;
  int pending_max = 10000;
  // After the provider did not answer a renewal, the held identity is used
  // this long before the next attempt.
  std::chrono::seconds renew_retry = std::chrono::seconds(30);
  std::chrono::milliseconds cache_ttl{5000};  // a session read once per replica this long
};

// A path of the portal to return to after signing in: "/" followed by no
// "/" or "\" (which a browser would read as another host), printable ASCII,
// at most 2 KiB. kInvalidArgument naming `field` otherwise: an open
// redirect is refused, not repaired.
Status CheckReturnTo(std::string_view field, std::string_view return_to);

struct BegunSignIn {
  std::string authorization_url{};
  std::string browser_binding{};  // the cookie value that binds the callback to this browser
};

// Why a sign-in did not open a session, as the portal names it to the
// person (/sign-in?sign_in_error=<SignInFailureName>).
enum class SignInFailure {
  kExpired,              // no such sign-in under way: too old, already used, or made up
  kBrowserMismatch,      // begun in another browser, or its cookie is gone
  kDenied,               // the provider refused or the person cancelled
  kProviderUnavailable,  // the provider cannot be reached
  kRefused,              // septad refused the provider's answer (its log says why)
};
std::string_view SignInFailureName(SignInFailure failure);

struct OpenedSession {
  PersonSession session{};
  std::string cookie_value{};
  std::string return_to{};
};

struct SignInOutcome {
  std::optional<OpenedSession> opened{};
  SignInFailure failure = SignInFailure::kRefused;  // when not opened
  std::string reason{};                             // for septad's log
};

// What the provider's redirect to the callback carries.
struct SignInCallback {
  std::string state{};
  std::string code{};
  std::string error{};  // the provider's "error" (RFC 6749 4.1.2.1): access_denied, ...
};

// A request's person, by its session cookie.
struct SignedInPerson {
  std::string session_id{};
  std::shared_ptr<const Person> person{};
  TimePoint expire_time{};  // the session's
};

class PersonSignIn {
 public:
  PersonSignIn(Store& store, const Clock& clock, RandomSource& random, SignInProviders& providers,
               PersonTokenVerifier& verifier, PersonSignInLimits limits = {});

  std::vector<SignInProviderInfo> Providers() const { return providers_.List(); }

  // A sign-in at `issuer` (kInvalidArgument naming "issuer" for one that
  // signs no one in to the portal) returning to `return_to` (CheckReturnTo),
  // begun from the address `client`.
  Result<BegunSignIn> Begin(const std::string& issuer, const std::string& return_to, const std::string& redirect_uri,
                            const std::string& client, const std::string& request_id);
  // The callback: the sign-in under way is spent whatever comes of it.
  SignInOutcome Finish(const SignInCallback& callback, std::string_view browser_binding,
                       const std::string& redirect_uri, const std::string& request_id);
  // kUnauthenticated for a cookie of no live session, or one the provider
  // ended at a renewal.
  Result<SignedInPerson> Authenticate(std::string_view cookie_value, const std::string& request_id);
  // Ends the session: revoked here, its refresh token at the provider; the
  // provider's logout URL (empty: none) for the browser to visit.
  Result<std::string> SignOut(const std::string& session_id, const std::string& post_logout_redirect_uri,
                              const std::string& request_id);
  // A revocation committed anywhere (Store::WatchRevocations): the cached
  // sessions it may concern are read again.
  void Forget(const Revocation& revocation);

 private:
  struct Cached {
    PersonSession session;
    TimePoint fetched_at;
    std::optional<TimePoint> renew_failed_at;  // the provider did not answer then
  };
  Result<PersonSession> Read(const std::string& id);    // from the store
  Result<PersonSession> Lookup(const std::string& id);  // Read, or the cache's
  // The session with its identity renewed when due (or held while the
  // provider is down).
  Result<PersonSession> RenewIfDue(PersonSession session, const std::string& request_id);
  Status End(const PersonSession& session, std::string_view action, const std::string& request_id);
  Result<OpenedSession> Open(const Person& person, const ProviderTokens& tokens, const PendingSignIn& pending,
                             const std::string& request_id);
  std::mutex& RenewalLock(const std::string& id);

  Store& store_;
  const Clock& clock_;
  RandomSource& random_;
  SignInProviders& providers_;
  PersonTokenVerifier& verifier_;
  const PersonSignInLimits limits_;
  std::mutex mu_;
  std::unordered_map<std::string, Cached> cache_;  // by session id
  std::uint64_t generation_ = 0;                   // bumped by Forget
  // One renewal of a session at a time in this process: a provider that
  // rotates refresh tokens refuses the second use of one (and may end the
  // whole grant for it).
  std::array<std::mutex, 64> renewal_locks_;
};

}  // namespace septa::core
