// API token use cases: issue (the secret is shown once), list, revoke.
// Every issued token expires: a tenant's no later than its trust tier's
// credential_ttl_max, an admin token no later than TokenLimits::admin_ttl_max.
// A TTL above the cap is capped, not refused (as Vault treats a role's
// max_ttl); no TTL means the cap. Only the bootstrap admin token, kept in a
// 0600 file under data_dir, never expires.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "common/clock.h"
#include "services/core/auth.h"
#include "services/core/store.h"

namespace septa::core {

struct TokenRequest {
  std::string principal;  // "admin" | "tenant:<name>"
  std::string role;       // "owner" | "viewer"; required
  std::string ttl;        // "90m", "24h"; empty: the cap
  std::string description;
  // Scoped to these apply sets of the principal (core/auth.h
  // RequireApplySetInScope); empty: not scoped.
  std::vector<std::string> apply_sets{};
};

// Vault's default max_lease_ttl (32 days).
inline constexpr std::chrono::seconds kDefaultAdminTokenTtlMax = std::chrono::hours(768);

struct TokenLimits {
  std::chrono::seconds admin_ttl_max = kDefaultAdminTokenTtlMax;
  int tenant_live_max = 100;  // unexpired, unrevoked tokens one tenant may hold
};

struct IssuedToken {
  ApiToken token;
  std::string secret_text;  // the bearer token; never stored
};

class TokenService {
 public:
  TokenService(Store& store, const Clock& clock, RandomSource& random, Authenticator& authenticator,
               TokenLimits limits = {})
      : store_(store), clock_(clock), random_(random), authenticator_(authenticator), limits_(limits) {}

  // Admins issue any token; a tenant owner issues tokens for its own tenant.
  // kResourceExhausted when the tenant already holds tenant_live_max live tokens.
  Result<IssuedToken> Create(const RequestContext& ctx, const TokenRequest& request);
  // Admins see every token, tenant principals their tenant's.
  Result<std::vector<ApiToken>> List(const RequestContext& ctx);
  // Revoking a revoked token succeeds and changes nothing.
  Status Revoke(const RequestContext& ctx, const std::string& id);

  // The first admin token of an installation, issued by "system" for
  // `ttl` (capped as every admin token): only while no live admin owner
  // token exists (nullopt otherwise), so that restarts and replicas do not
  // each mint a root credential. It expires and can be revoked like any.
  Result<std::optional<IssuedToken>> CreateBootstrapAdmin(std::chrono::seconds ttl);

  // Issues in the caller's transaction (a declared token's delivery,
  // token_delivery.h), with every rule Create applies past the caller's
  // authorization: the tenant exists and is active, the cap, the count.
  // `ttl`: the requested lifetime; nullopt or more than the cap means the cap.
  // Audited as `audit_action` ("token.create"; "token.exchange" for a token
  // exchange) with `audit_detail`.
  Result<IssuedToken> IssueIn(Tx& tx, TimePoint now, const RequestContext& ctx, const Principal& subject,
                              std::string description, std::optional<std::chrono::seconds> ttl,
                              std::string audit_action = "token.create", std::string audit_detail = {});

 private:
  Result<IssuedToken> Issue(const RequestContext& ctx, const Principal& subject, std::string description,
                            std::optional<std::chrono::seconds> ttl);
  // kResourceExhausted when `principal` (a tenant) holds limits_.tenant_live_max live tokens.
  Status RequireRoomForAnotherToken(Tx& tx, const std::string& principal, TimePoint now) const;

  Store& store_;
  const Clock& clock_;
  RandomSource& random_;
  Authenticator& authenticator_;
  const TokenLimits limits_;
};

}  // namespace septa::core
