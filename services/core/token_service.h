// API token use cases: issue (the secret is shown once), list, revoke.
#pragma once

#include <string>
#include <vector>

#include "common/clock.h"
#include "services/core/auth.h"
#include "services/core/store.h"

namespace septa::core {

struct TokenRequest {
  std::string principal;    // "admin" | "tenant:<name>"
  std::string role;         // "owner" | "viewer"
  std::string ttl;          // "90m", "24h"; empty: never expires
  std::string description;
};

struct IssuedToken {
  ApiToken token;
  std::string secret_text;  // the bearer token; never stored
};

class TokenService {
 public:
  TokenService(Store& store, const Clock& clock, RandomSource& random, Authenticator& authenticator)
      : store_(store), clock_(clock), random_(random), authenticator_(authenticator) {}

  // Admins issue any token; a tenant owner issues tokens for its own tenant.
  Result<IssuedToken> Create(const RequestContext& ctx, const TokenRequest& request);
  // Admins see every token, tenant principals their tenant's.
  Result<std::vector<ApiToken>> List(const RequestContext& ctx);
  // Revoking a revoked token succeeds and changes nothing.
  Status Revoke(const RequestContext& ctx, const std::string& id);

  // The first admin token of a fresh installation, issued by "system".
  Result<IssuedToken> CreateBootstrapAdmin();

 private:
  Result<IssuedToken> Issue(const RequestContext& ctx, const Principal& subject, std::string description,
                            std::optional<std::chrono::seconds> ttl);

  Store& store_;
  const Clock& clock_;
  RandomSource& random_;
  Authenticator& authenticator_;
};

}  // namespace septa::core
