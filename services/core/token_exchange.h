// OAuth 2.0 Token Exchange (RFC 8693) for pipelines without stored secrets:
// a token that one of the identity providers septad trusts signed (a GitHub
// Actions or GitLab CI job's OIDC ID token, say) is exchanged for a
// short-lived Septa API token, by the first of the admin's rules whose
// issuer and claims it carries. The verification (discovery, keys,
// signature, iss/aud/exp) is the SubjectTokenVerifier port's, implemented
// by services/oidc; this is the policy: which rule, which principal, how
// long, and the audit.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/clock.h"
#include "services/core/auth.h"
#include "services/core/store.h"
#include "services/core/token_service.h"

namespace septa::core {

inline constexpr char kTokenExchangeGrant[] = "urn:ietf:params:oauth:grant-type:token-exchange";
inline constexpr char kIdTokenType[] = "urn:ietf:params:oauth:token-type:id_token";
inline constexpr char kJwtTokenType[] = "urn:ietf:params:oauth:token-type:jwt";
inline constexpr char kAccessTokenType[] = "urn:ietf:params:oauth:token-type:access_token";

// A subject token whose signature and registered claims were verified.
struct VerifiedSubjectToken {
  std::string issuer;   // "iss", one of the configured issuers
  std::string subject;  // "sub"; may be empty
  // The token's claims whose values are strings (rules match them, the
  // audit names them); claims of other types are left out.
  std::map<std::string, std::string> claims;
  TimePoint expire_time{};
};

// Verifies a token of one of the configured identity providers.
class SubjectTokenVerifier {
 public:
  virtual ~SubjectTokenVerifier() = default;
  // kUnauthenticated, the reason in the message (for septad's log, never
  // for the client), when the token is not one a configured issuer signed
  // for Septa's audience and still valid; kUnavailable when the issuer's
  // keys cannot be fetched and none are known yet.
  virtual Result<VerifiedSubjectToken> Verify(std::string_view token) = 0;
};

// One of the admin's token_exchange_rules.
struct ExchangeRule {
  std::string issuer;                         // of oidc_issuers
  std::map<std::string, std::string> claims;  // every one must be the token's, exactly; never empty
  Principal principal;                        // admin, or a tenant's, with its role
  std::chrono::seconds ttl{900};              // capped as every token: the tenant's tier, the admin cap
};

// The first rule whose issuer is the token's and whose every claim the
// token carries with exactly that value (in configuration order: an admin
// puts the narrow rules first); nullptr when none.
const ExchangeRule* MatchExchangeRule(std::span<const ExchangeRule> rules, const VerifiedSubjectToken& token);

struct ExchangeRequest {
  std::string grant_type;
  std::string subject_token;
  std::string subject_token_type;
  std::string requested_token_type;  // optional
};

struct ExchangedToken {
  IssuedToken issued;
  std::chrono::seconds expires_in{0};
};

class TokenExchangeService {
 public:
  // `verifier` null: no issuer is configured, and every exchange is refused
  // as such.
  TokenExchangeService(const Clock& clock, TokenService& tokens, Store& store,
                       std::shared_ptr<SubjectTokenVerifier> verifier, std::vector<ExchangeRule> rules)
      : clock_(clock), tokens_(tokens), store_(store), verifier_(std::move(verifier)), rules_(std::move(rules)) {}

  // kInvalidArgument naming the field for a malformed request;
  // kUnauthenticated ("the subject token was refused") for a token that
  // does not verify or that no rule admits, the reason logged with the
  // request id; then as TokenService::IssueIn (a suspended tenant, a
  // tenant at its live-token limit). The token is audited as
  // "token.exchange" by the rule's principal, with the issuer, the subject
  // and the claims the rule matched.
  Result<ExchangedToken> Exchange(const RequestContext& ctx, const ExchangeRequest& request);

  bool configured() const { return verifier_ != nullptr; }

 private:
  const Clock& clock_;
  TokenService& tokens_;
  Store& store_;
  std::shared_ptr<SubjectTokenVerifier> verifier_;
  const std::vector<ExchangeRule> rules_;
};

}  // namespace septa::core
