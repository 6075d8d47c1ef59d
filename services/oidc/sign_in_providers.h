// The portal's client at each identity provider people sign in with (core's
// SignInProviders): its endpoints read by discovery and kept, the
// authorization code grant with PKCE, refresh, revocation and RP-initiated
// logout over oauth_client.h, as a confidential client (HTTP Basic).
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/clock.h"
#include "services/core/person_sign_in.h"
#include "services/oidc/oauth_client.h"

namespace septa::oidc {

struct PortalClientSettings {
  std::string issuer{};
  std::string name{};  // the sign-in button's; empty: the issuer's host
  OauthClient client{};
  std::vector<std::string> scopes{};
  std::string ca_pem{};  // the provider's TLS trust; empty: the system's
};

class PortalClients final : public core::SignInProviders {
 public:
  // `http` makes the client of one call: a sign-in or a renewal is one
  // request or two per person and hour, so no connection is kept, and no
  // call waits for another's (a provider that hangs holds only its own).
  using HttpFactory = std::function<std::unique_ptr<ProviderHttp>(const std::string& ca_pem)>;
  PortalClients(std::vector<PortalClientSettings> providers, HttpFactory http, const Clock& clock,
                std::chrono::seconds discovery_max_age = std::chrono::hours(1));

  std::vector<core::SignInProviderInfo> List() const override;
  Result<std::string> AuthorizationUrl(const std::string& issuer, const core::AuthorizationRequest& request) override;
  Result<core::ProviderTokens> RedeemCode(const std::string& issuer, const std::string& code,
                                          const std::string& code_verifier, const std::string& redirect_uri) override;
  Result<core::ProviderTokens> Refresh(const std::string& issuer, const std::string& refresh_token) override;
  Status RevokeRefreshToken(const std::string& issuer, const std::string& refresh_token) override;
  Result<std::string> EndSessionUrl(const std::string& issuer, const std::string& id_token,
                                    const std::string& post_logout_redirect_uri) override;

 private:
  struct Provider {
    PortalClientSettings settings;
    std::optional<ProviderEndpoints> endpoints;
    TimePoint discovered_at{};
  };
  struct Resolved {
    const PortalClientSettings* settings = nullptr;
    ProviderEndpoints endpoints{};
  };
  // The provider of `issuer` and its endpoints (discovered when first
  // needed, again after discovery_max_age, and always when `fresh`).
  Result<Resolved> Find(const std::string& issuer, bool fresh = false);

  HttpFactory http_;
  const Clock& clock_;
  const std::chrono::seconds discovery_max_age_;
  std::mutex mu_;  // providers_' endpoints
  std::vector<Provider> providers_;
};

// `base` with `fields` appended as its query (after "?", or "&" when it has one).
std::string WithQuery(const std::string& base, const std::vector<std::pair<std::string, std::string>>& fields);

}  // namespace septa::oidc
