#include "services/oidc/sign_in_providers.h"

#include "common/http_url.h"
#include "common/text.h"

namespace septa::oidc {

namespace {

core::ProviderTokens ProviderTokensOf(Tokens tokens) {
  return core::ProviderTokens{.id_token = std::move(tokens.id_token), .refresh_token = std::move(tokens.refresh_token)};
}

}  // namespace

std::string WithQuery(const std::string& base, const std::vector<std::pair<std::string, std::string>>& fields) {
  return base + (base.find('?') == std::string::npos ? "?" : "&") + FormEncode(fields);
}

PortalClients::PortalClients(std::vector<PortalClientSettings> providers, HttpFactory http, const Clock& clock,
                             std::chrono::seconds discovery_max_age)
    : http_(std::move(http)), clock_(clock), discovery_max_age_(discovery_max_age) {
  for (PortalClientSettings& settings : providers) {
    if (settings.name.empty()) {
      const std::optional<HttpUrl> url = ParseHttpUrl(settings.issuer);
      settings.name = url ? url->authority : settings.issuer;
    }
    providers_.push_back(Provider{std::move(settings), std::nullopt, {}});
  }
}

std::vector<core::SignInProviderInfo> PortalClients::List() const {
  std::vector<core::SignInProviderInfo> out;
  for (const Provider& p : providers_) out.push_back({.issuer = p.settings.issuer, .name = p.settings.name});
  return out;
}

Result<PortalClients::Resolved> PortalClients::Find(const std::string& issuer, bool fresh) {
  Provider* provider = nullptr;
  for (Provider& p : providers_) {
    if (p.settings.issuer == issuer) provider = &p;
  }
  if (provider == nullptr) return InvalidArgument("issuer " + QuotedExcerpt(issuer) + " signs no one in to the portal");
  const TimePoint now = clock_.Now();
  {
    std::lock_guard lock(mu_);
    if (!fresh && provider->endpoints && now - provider->discovered_at < discovery_max_age_) {
      return Resolved{&provider->settings, *provider->endpoints};
    }
  }
  auto endpoints = Discover(*http_(provider->settings.ca_pem), issuer);
  if (!endpoints.ok()) {
    // Whatever it says, a provider whose discovery fails cannot sign anyone in now.
    return Unavailable("discovery at " + issuer + ": " + endpoints.status().message());
  }
  if (endpoints->authorization_endpoint.empty()) {
    return Unavailable("the provider " + issuer + " names no authorization_endpoint");
  }
  std::lock_guard lock(mu_);
  provider->endpoints = *endpoints;
  provider->discovered_at = now;
  return Resolved{&provider->settings, *std::move(endpoints)};
}

Result<std::string> PortalClients::AuthorizationUrl(const std::string& issuer,
                                                    const core::AuthorizationRequest& request) {
  // Discovered afresh: a provider that is down is told to the person now,
  // not after a redirect to its error page (a sign-in is worth one request).
  SEPTA_ASSIGN_OR_RETURN(const Resolved found, Find(issuer, /*fresh=*/true));
  return WithQuery(found.endpoints.authorization_endpoint, {{"response_type", "code"},
                                                            {"client_id", found.settings->client.id},
                                                            {"redirect_uri", request.redirect_uri},
                                                            {"scope", Join(found.settings->scopes, " ")},
                                                            {"state", request.state},
                                                            {"nonce", request.nonce},
                                                            {"code_challenge", request.code_challenge},
                                                            {"code_challenge_method", "S256"}});
}

Result<core::ProviderTokens> PortalClients::RedeemCode(const std::string& issuer, const std::string& code,
                                                       const std::string& code_verifier,
                                                       const std::string& redirect_uri) {
  SEPTA_ASSIGN_OR_RETURN(const Resolved found, Find(issuer));
  SEPTA_ASSIGN_OR_RETURN(Tokens tokens,
                         oidc::RedeemCode(*http_(found.settings->ca_pem), found.endpoints, found.settings->client, code,
                                          code_verifier, redirect_uri, clock_));
  return ProviderTokensOf(std::move(tokens));
}

Result<core::ProviderTokens> PortalClients::Refresh(const std::string& issuer, const std::string& refresh_token) {
  SEPTA_ASSIGN_OR_RETURN(const Resolved found, Find(issuer));
  SEPTA_ASSIGN_OR_RETURN(Tokens tokens, oidc::Refresh(*http_(found.settings->ca_pem), found.endpoints,
                                                      found.settings->client, refresh_token, clock_));
  return ProviderTokensOf(std::move(tokens));
}

Status PortalClients::RevokeRefreshToken(const std::string& issuer, const std::string& refresh_token) {
  SEPTA_ASSIGN_OR_RETURN(const Resolved found, Find(issuer));
  if (found.endpoints.revocation_endpoint.empty()) return Status::Ok();
  return oidc::RevokeRefreshToken(*http_(found.settings->ca_pem), found.endpoints, found.settings->client,
                                  refresh_token);
}

Result<std::string> PortalClients::EndSessionUrl(const std::string& issuer, const std::string& id_token,
                                                 const std::string& post_logout_redirect_uri) {
  SEPTA_ASSIGN_OR_RETURN(const Resolved found, Find(issuer));
  if (found.endpoints.end_session_endpoint.empty()) return std::string();
  // OpenID Connect RP-Initiated Logout 1.0 §2.
  return WithQuery(found.endpoints.end_session_endpoint, {{"id_token_hint", id_token},
                                                          {"post_logout_redirect_uri", post_logout_redirect_uri},
                                                          {"client_id", found.settings->client.id}});
}

}  // namespace septa::oidc
