// Identity as septad's configuration defines it: oidc_issuers become
// services/oidc's verifier, which verifies both the token exchange's
// subject tokens (token_exchange_rules become core's rules) and people's ID
// tokens (the issuers with a client_id; admin_groups).
#include <utility>

#include "services/app/septad_app_impl.h"
#include "services/oidc/verifier.h"

namespace septa::app {

namespace wiring {

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
      if (!issuer.ca_file.empty()) {
        SEPTA_ASSIGN_OR_RETURN(settings.ca_pem, wiring::ReadConfiguredFile(
                                                    "oidc_issuers[" + std::to_string(i) + "].ca_file", issuer.ca_file));
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
  return Status::Ok();
}

}  // namespace septa::app
