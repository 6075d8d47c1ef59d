// The OAuth 2.0 Device Authorization Grant (RFC 8628) `septactl login`
// signs in by, over ProviderHttp and a Clock (discovery, refresh and
// revocation: services/oidc/oauth_client.h), so that every branch is
// tested without a network or waiting. Only the client's side: septad
// verifies the ID token's signature; here its iss, aud and exp are read, so
// that a wrong provider or client is named at login, not at the first call.
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
#include "services/oidc/oauth_client.h"

namespace septa::cli {

using oidc::ProviderEndpoints;
using oidc::ProviderHttp;
using oidc::Tokens;

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

}  // namespace septa::cli
