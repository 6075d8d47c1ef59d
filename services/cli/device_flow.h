// The OAuth 2.0 Device Authorization Grant (RFC 8628) and the refresh,
// revocation and discovery calls `septactl login` makes to an OpenID
// provider, over ProviderHttp and a Clock, so that every branch is tested
// without a network or waiting. Only the client's side: septad verifies
// the ID token's signature; here its iss, aud and exp are read, so that a
// wrong provider or client is named at login, not at the first call.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/clock.h"
#include "common/status.h"
#include "services/cli/provider_http.h"

namespace septa::cli {

// What OpenID Connect Discovery names (<issuer>/.well-known/openid-configuration).
struct ProviderEndpoints {
  std::string issuer{};
  std::string device_authorization_endpoint{};  // empty: the provider offers no device flow
  std::string token_endpoint{};
  std::string revocation_endpoint{};  // empty: none (RFC 7009 is optional)
};

// An http(s) URL septactl may send a credential to: https, or plain http
// on a loopback host. `what` names it in the message.
Status CheckProviderUrl(std::string_view url, std::string_view what);

// Discovery: the document's "issuer" must be `issuer` exactly (OpenID
// Connect Discovery 4.3), every endpoint an https URL (http: loopback).
Result<ProviderEndpoints> Discover(ProviderHttp& http, const std::string& issuer);

struct DeviceAuthorization {
  std::string device_code{};
  std::string user_code{};
  std::string verification_uri{};
  std::string verification_uri_complete{};  // empty: the provider gives none
  std::chrono::seconds expires_in{0};
  std::chrono::seconds interval{5};  // RFC 8628 3.2: 5 s when the provider names none
};

Result<DeviceAuthorization> StartDeviceAuthorization(ProviderHttp& http, const ProviderEndpoints& provider,
                                                     const std::string& client_id, const std::string& scope);

struct Tokens {
  std::string id_token{};
  std::string refresh_token{};  // empty: none given (a refresh that gave none keeps the old one)
  TimePoint id_token_expiry{};
  std::string subject{};  // the ID token's "email", else "sub": whom it names, for messages
};

struct PollOptions {
  // The longest wait for the approval (the code's own expiry cuts it shorter).
  std::chrono::seconds max_wait{900};
  // Ctrl-C: the wait ends (CANCELLED) at the next sleep.
  std::stop_token stop{};
  // Told of slow_down and of a provider that did not answer one poll.
  std::function<void(const std::string&)> note{};
};

// Polls the token endpoint every `interval` (slow_down adds 5 s, RFC 8628
// 3.5) until the person approves (the tokens, their ID token checked),
// denies (PERMISSION_DENIED), the code expires or max_wait passes
// (DEADLINE_EXCEEDED), Ctrl-C (CANCELLED), or the provider answers
// something else (UNAUTHENTICATED naming its error) or fails three polls in
// a row (UNAVAILABLE).
Result<Tokens> PollForTokens(ProviderHttp& http, const ProviderEndpoints& provider, const std::string& client_id,
                             const DeviceAuthorization& authorization, const Clock& clock, const PollOptions& options);

// The refresh_token grant: a new ID token (checked) and the rotated refresh
// token (the old one when the provider keeps it). A refused refresh token
// (invalid_grant: expired, revoked, reused) is UNAUTHENTICATED.
Result<Tokens> Refresh(ProviderHttp& http, const ProviderEndpoints& provider, const std::string& client_id,
                       const std::string& refresh_token, const Clock& clock);

// RFC 7009 revocation of a refresh token at the provider's
// revocation_endpoint (FAILED_PRECONDITION when it has none).
Status RevokeRefreshToken(ProviderHttp& http, const ProviderEndpoints& provider, const std::string& client_id,
                          const std::string& refresh_token);

// The ID token read without its signature: a JWT of at most 64 KiB in one
// of the algorithms septad accepts, "iss" the issuer, "aud" holding the
// client id, "exp" after `now` (60 s of skew); its expiry and subject.
Result<Tokens> ReadIdToken(const std::string& id_token, const std::string& issuer, const std::string& client_id,
                           TimePoint now);

// application/x-www-form-urlencoded.
std::string FormEncode(const std::vector<std::pair<std::string, std::string>>& fields);

}  // namespace septa::cli

namespace septa::cli {

// The "exp" of a JWT read without any check (a stored ID token, to decide
// whether to refresh it); nullopt when it has none or is no JWT.
std::optional<TimePoint> IdTokenExpiry(const std::string& id_token);

}  // namespace septa::cli
