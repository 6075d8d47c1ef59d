// The identity keys of septad's configuration (oidc_issuers,
// token_exchange_rules): lists of mappings, parsed from their YAML or JSON
// text. Private to services/config (config.cc's key table calls them).
#pragma once

#include <string>
#include <vector>

#include "common/status.h"
#include "services/config/config.h"

namespace septa::config::identity {

// `where` names the key and its source; errors add the item's index and
// field: "oidc_issuers[1].audience (septa.yaml): is required".
Status ParseOidcIssuers(const std::string& text, const std::string& where, std::vector<OidcIssuer>& out);
Status ParseTokenExchangeRules(const std::string& text, const std::string& where, std::vector<TokenExchangeRule>& out);

// What holds across the two keys: every rule's issuer is configured.
Status CheckIdentityKeys(const Config& config);

}  // namespace septa::config::identity
