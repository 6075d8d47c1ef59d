// A relying party's calls to an OpenID provider, shared by septactl's
// login (the device flow, services/cli/device_flow.h) and septad's portal
// sign-in (the authorization code flow, core/person_sign_in.h): discovery,
// the token endpoint's code and refresh grants, RFC 7009 revocation, and
// the ID token's claims read for messages. Over ProviderHttp and a Clock,
// so that every branch is tested without a network. The ID token's
// signature is verified by OidcVerifier (verifier.h), not here.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/clock.h"
#include "common/status.h"
#include "services/oidc/provider_http.h"

namespace septa::oidc {

// What OpenID Connect Discovery names (<issuer>/.well-known/openid-configuration).
struct ProviderEndpoints {
  std::string issuer{};
  std::string authorization_endpoint{};         // empty: no browser sign-in
  std::string device_authorization_endpoint{};  // empty: the provider offers no device flow
  std::string token_endpoint{};
  std::string revocation_endpoint{};   // empty: none (RFC 7009 is optional)
  std::string end_session_endpoint{};  // empty: no RP-initiated logout
};

// The client Septa is to the provider: septactl's is public (no secret),
// the portal's confidential (client_secret_basic, RFC 6749 2.3.1).
struct OauthClient {
  std::string id{};
  std::string secret{};  // empty: a public client
};

// An http(s) URL a credential may be sent to: https, or plain http on a
// loopback host. `what` names it in the message.
Status CheckProviderUrl(std::string_view url, std::string_view what);

// Discovery: the document's "issuer" must be `issuer` exactly (OpenID
// Connect Discovery 4.3), every endpoint an https URL (http: loopback).
Result<ProviderEndpoints> Discover(ProviderHttp& http, const std::string& issuer);

struct Tokens {
  std::string id_token{};
  std::string refresh_token{};  // empty: none given (a refresh that gave none keeps the old one)
  TimePoint id_token_expiry{};
  std::string subject{};  // the ID token's "email", else "sub": whom it names, for messages
};

// The authorization code grant with PKCE (RFC 7636): the code the browser
// brought back, redeemed once. A code the provider refuses (spent,
// expired, another verifier or redirect URI: invalid_grant) is
// UNAUTHENTICATED; a provider that does not answer, UNAVAILABLE.
Result<Tokens> RedeemCode(ProviderHttp& http, const ProviderEndpoints& provider, const OauthClient& client,
                          const std::string& code, const std::string& code_verifier, const std::string& redirect_uri,
                          const Clock& clock);

// The refresh_token grant: a new ID token (checked) and the rotated refresh
// token (the old one when the provider keeps it). A refused refresh token
// (invalid_grant: expired, revoked, reused) is UNAUTHENTICATED; a provider
// that does not answer, UNAVAILABLE.
Result<Tokens> Refresh(ProviderHttp& http, const ProviderEndpoints& provider, const OauthClient& client,
                       const std::string& refresh_token, const Clock& clock);

// RFC 7009 revocation of a refresh token at the provider's
// revocation_endpoint (FAILED_PRECONDITION when it has none).
Status RevokeRefreshToken(ProviderHttp& http, const ProviderEndpoints& provider, const OauthClient& client,
                          const std::string& refresh_token);

// The ID token read without its signature: a JWT in one of the algorithms
// septad accepts, "iss" the issuer, "aud" holding the client id, "exp"
// after `now` (60 s of skew); its expiry and subject.
Result<Tokens> ReadIdToken(const std::string& id_token, const std::string& issuer, const std::string& client_id,
                           TimePoint now);

// application/x-www-form-urlencoded.
std::string FormEncode(const std::vector<std::pair<std::string, std::string>>& fields);

// The "exp" of a JWT read without any check (a stored ID token, to decide
// whether to refresh it); nullopt when it has none or is no JWT.
std::optional<TimePoint> IdTokenExpiry(const std::string& id_token);

// For the device flow's own calls: the string member `name` of `object`
// (empty when absent or not a string); the provider's answer as a JSON
// object (`what` names the endpoint); an OAuth error answer (RFC 6749 5.2)
// as one line; the token endpoint's successful answer as Tokens.
std::string Member(const nlohmann::json& object, const char* name);
Result<nlohmann::json> JsonObject(const ProviderReply& reply, const std::string& what);
std::string OauthError(const nlohmann::json& answer);
Result<Tokens> TokensFrom(const nlohmann::json& answer, const ProviderEndpoints& provider, const std::string& client_id,
                          TimePoint now);

}  // namespace septa::oidc
