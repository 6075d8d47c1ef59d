// Identity as septad's configuration defines it: oidc_issuers become
// services/oidc's verifier, which verifies both the token exchange's
// subject tokens (token_exchange_rules become core's rules) and people's ID
// tokens (the issuers with a client_id; admin_groups); the issuers with the
// portal's client secret sign people in to the portal (PersonSignIn).
#include <utility>

#include "common/text.h"
#include "services/app/septad_app_impl.h"
#include "services/oidc/verifier.h"

namespace septa::app {

namespace wiring {

// One call to an identity provider's endpoint (discovery, token, revocation) at most this long.
constexpr std::chrono::seconds kProviderTimeout{10};

Result<std::vector<core::ExchangeRule>> ExchangeRulesOf(const config::Config& config) {
  std::vector<core::ExchangeRule> rules;
  for (std::size_t i = 0; i < config.token_exchange_rules.size(); ++i) {
    const config::TokenExchangeRule& rule = config.token_exchange_rules[i];
    const std::string field = "token_exchange_rules[" + std::to_string(i) + "]";
    SEPTA_ASSIGN_OR_RETURN(const core::Role role, core::ParseRole(field + ".role", rule.role));
    SEPTA_ASSIGN_OR_RETURN(core::Principal principal, core::ParsePrincipal(field + ".principal", rule.principal, role));
    principal.apply_sets = rule.apply_sets;
    rules.push_back(core::ExchangeRule{
        .issuer = rule.issuer, .claims = rule.claims, .principal = std::move(principal), .ttl = rule.ttl});
  }
  return rules;
}

}  // namespace wiring

Status SeptadApp::Impl::MakeIdentity() {
  SEPTA_ASSIGN_OR_RETURN(std::vector<core::ExchangeRule> rules, wiring::ExchangeRulesOf(config));
  std::shared_ptr<oidc::OidcVerifier> verifier;
  core::PeopleSettings people_settings{.admin_groups = {}, .cache_ttl = config.auth_cache_ttl};
  bool signs_people_in = false;
  std::vector<oidc::PortalClientSettings> portal;
  if (!config.oidc_issuers.empty()) {
    std::vector<oidc::ProviderSettings> providers;
    for (std::size_t i = 0; i < config.oidc_issuers.size(); ++i) {
      const config::OidcIssuer& issuer = config.oidc_issuers[i];
      oidc::ProviderSettings settings{.issuer = issuer.issuer,
                                      .audience = issuer.audience,
                                      .ca_pem = {},
                                      .people_audiences = {},
                                      .username_claim = issuer.username_claim,
                                      .groups_claim = issuer.groups_claim};
      if (!issuer.client_id.empty()) {
        signs_people_in = true;
        settings.people_audiences.push_back(issuer.client_id);
        if (!issuer.cli_client_id.empty()) settings.people_audiences.push_back(issuer.cli_client_id);
        people_settings.admin_groups[issuer.issuer] = issuer.admin_groups;
      }
      const std::string field = "oidc_issuers[" + std::to_string(i) + "]";
      if (!issuer.ca_file.empty()) {
        SEPTA_ASSIGN_OR_RETURN(settings.ca_pem, wiring::ReadConfiguredFile(field + ".ca_file", issuer.ca_file));
      }
      if (!issuer.client_secret_file.empty()) {
        SEPTA_ASSIGN_OR_RETURN(std::string secret,
                               wiring::ReadConfiguredFile(field + ".client_secret_file", issuer.client_secret_file));
        DropTrailingLineBreaks(secret);
        if (secret.empty()) return InvalidArgument(field + ".client_secret_file: the file is empty");
        portal.push_back(oidc::PortalClientSettings{.issuer = issuer.issuer,
                                                    .name = issuer.name,
                                                    .client = {.id = issuer.client_id, .secret = std::move(secret)},
                                                    .scopes = issuer.scopes,
                                                    .ca_pem = settings.ca_pem});
      }
      providers.push_back(std::move(settings));
    }
    SEPTA_ASSIGN_OR_RETURN(std::unique_ptr<oidc::OidcVerifier> made,
                           oidc::OidcVerifier::Create(std::move(providers), clock));
    verifier = std::move(made);
  }
  token_exchange = std::make_unique<core::TokenExchangeService>(clock, *tokens, *store, verifier, std::move(rules));
  people = std::make_unique<core::PeopleAuthenticator>(*store, clock, signs_people_in ? verifier : nullptr,
                                                       std::move(people_settings));
  if (!portal.empty()) {
    portal_clients = std::make_unique<oidc::PortalClients>(
        std::move(portal),
        [](const std::string& ca_pem) { return oidc::NewProviderHttp(wiring::kProviderTimeout, ca_pem); }, clock);
    person_sign_in = std::make_unique<core::PersonSignIn>(*store, clock, random, *portal_clients, *verifier);
  }
  return Status::Ok();
}

}  // namespace septa::app
