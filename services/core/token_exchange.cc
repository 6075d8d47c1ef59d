#include "services/core/token_exchange.h"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "common/text.h"

namespace septa::core {

namespace {

// What the client is told of any refusal of its subject token: the reason
// (an unknown issuer, a wrong audience, a bad signature, no rule) is for
// the log alone, so that the endpoint teaches a prober nothing.
constexpr char kRefused[] = "the subject token was refused (septad's log says why, by this request's id)";

// The audit's words for an exchange: who presented what, which rule's claims matched.
std::string ExchangeDetail(const VerifiedSubjectToken& token, const ExchangeRule& rule) {
  std::string detail = "issuer " + QuotedExcerpt(token.issuer) + ", subject " + QuotedExcerpt(token.subject);
  for (const auto& entry : rule.claims) detail += ", " + entry.first + " " + QuotedExcerpt(entry.second);
  return detail;
}

}  // namespace

const ExchangeRule* MatchExchangeRule(std::span<const ExchangeRule> rules, const VerifiedSubjectToken& token) {
  for (const ExchangeRule& rule : rules) {
    if (rule.issuer != token.issuer || rule.claims.empty()) continue;
    const bool all = std::ranges::all_of(rule.claims, [&](const auto& wanted) {
      const auto found = token.claims.find(wanted.first);
      return found != token.claims.end() && found->second == wanted.second;
    });
    if (all) return &rule;
  }
  return nullptr;
}

Result<ExchangedToken> TokenExchangeService::Exchange(const RequestContext& ctx, const ExchangeRequest& request) {
  if (request.grant_type != kTokenExchangeGrant) {
    return InvalidField("grant_type",
                        "must be " + std::string(kTokenExchangeGrant) + ", got " + QuotedExcerpt(request.grant_type));
  }
  if (request.subject_token.empty()) return InvalidField("subject_token", "is required");
  if (request.subject_token_type != kIdTokenType && request.subject_token_type != kJwtTokenType) {
    return InvalidField("subject_token_type", "must be " + std::string(kIdTokenType) + " or " + kJwtTokenType +
                                                  ", got " + QuotedExcerpt(request.subject_token_type));
  }
  if (!request.requested_token_type.empty() && request.requested_token_type != kAccessTokenType) {
    return InvalidField("requested_token_type", "must be " + std::string(kAccessTokenType) +
                                                    " (the only type issued) or left out, got " +
                                                    QuotedExcerpt(request.requested_token_type));
  }
  if (verifier_ == nullptr) {
    return FieldError(Code::kFailedPrecondition, "subject_token",
                      "token exchange is not configured on this server (no oidc_issuers)");
  }
  auto verified = verifier_->Verify(request.subject_token);
  if (!verified.ok()) {
    if (verified.status().code() != Code::kUnauthenticated) return verified.status();
    spdlog::warn("token exchange refused: request_id={} {}", ctx.request_id, verified.status().message());
    return Unauthenticated(kRefused);
  }
  const ExchangeRule* rule = MatchExchangeRule(rules_, *verified);
  if (rule == nullptr) {
    spdlog::warn(
        "token exchange refused: request_id={} no token_exchange_rules entry matches the token of issuer {} "
        "and subject {}",
        ctx.request_id, QuotedExcerpt(verified->issuer), QuotedExcerpt(verified->subject));
    return Unauthenticated(kRefused);
  }
  RequestContext as_rule = ctx;
  as_rule.principal = rule->principal;
  // Both quoted excerpts: under the 200 bytes of a description, escaped.
  std::string description = "exchanged: " + QuotedExcerpt(verified->issuer) + " " + QuotedExcerpt(verified->subject);
  const TimePoint now = Now(clock_);
  auto issued = TransactFor(store_, TxMode::kReadWrite, [&](Tx& tx) {
    return tokens_.IssueIn(tx, now, as_rule, rule->principal, description, rule->ttl, "token.exchange",
                           ExchangeDetail(*verified, *rule));
  });
  if (IsNotFound(issued)) {
    // The rule names a tenant that does not exist: the admin's mistake,
    // said so, without echoing the store's words.
    spdlog::warn("token exchange refused: request_id={} the matching rule names {}, which does not exist",
                 ctx.request_id, rule->principal.ToString());
    return FailedPrecondition("the token exchange rule this token matches names a tenant that does not exist");
  }
  SEPTA_RETURN_IF_ERROR(issued);
  ExchangedToken out;
  out.expires_in = std::chrono::duration_cast<std::chrono::seconds>(issued->token.expire_time.value_or(now) - now);
  out.issued = *std::move(issued);
  return out;
}

}  // namespace septa::core
