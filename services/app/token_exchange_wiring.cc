// The token exchange as septad's configuration defines it: oidc_issuers
// become services/oidc's verifier, token_exchange_rules core's rules.
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

Status SeptadApp::Impl::MakeTokenExchange() {
  SEPTA_ASSIGN_OR_RETURN(std::vector<core::ExchangeRule> rules, wiring::ExchangeRulesOf(config));
  std::shared_ptr<core::SubjectTokenVerifier> verifier;
  if (!config.oidc_issuers.empty()) {
    std::vector<oidc::ProviderSettings> providers;
    for (std::size_t i = 0; i < config.oidc_issuers.size(); ++i) {
      const config::OidcIssuer& issuer = config.oidc_issuers[i];
      oidc::ProviderSettings settings{.issuer = issuer.issuer, .audience = issuer.audience, .ca_pem = {}};
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
  token_exchange =
      std::make_unique<core::TokenExchangeService>(clock, *tokens, *store, std::move(verifier), std::move(rules));
  return Status::Ok();
}

}  // namespace septa::app
