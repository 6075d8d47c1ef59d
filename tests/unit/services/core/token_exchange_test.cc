// The token exchange's policy (services/core/token_exchange.h): which rule
// admits a verified token, the token it issues, what is refused and what
// the client is told. The verification itself is services/oidc's
// (tests/unit/services/oidc, and tests/e2e/oidc against a real provider).
#include "services/core/token_exchange.h"

#include <map>

#include "tests/unit/services/core/core_fixture.h"

namespace septa::core {
namespace {

constexpr char kGithub[] = "https://token.actions.githubusercontent.com";
constexpr char kGitlab[] = "https://gitlab.example.com";

// A verifier whose answers the test sets, by token text.
class ScriptedVerifier final : public SubjectTokenVerifier {
 public:
  Result<VerifiedSubjectToken> Verify(std::string_view token) override {
    const auto found = answers.find(std::string(token));
    if (found == answers.end()) return Unauthenticated("the token's signature does not verify (scripted)");
    return found->second;
  }
  std::map<std::string, Result<VerifiedSubjectToken>> answers;
};

VerifiedSubjectToken GithubToken(const std::string& repository, const std::string& ref) {
  VerifiedSubjectToken t;
  t.issuer = kGithub;
  t.subject = "repo:" + repository + ":ref:" + ref;
  t.claims = {{"sub", t.subject}, {"repository", repository}, {"ref", ref}, {"environment", "prod"}};
  return t;
}

ExchangeRule Rule(std::string issuer, std::map<std::string, std::string> claims, const std::string& tenant, Role role,
                  std::chrono::seconds ttl = std::chrono::minutes(15)) {
  ExchangeRule rule;
  rule.issuer = std::move(issuer);
  rule.claims = std::move(claims);
  rule.principal.admin = tenant.empty();
  rule.principal.tenant = tenant;
  rule.principal.role = role;
  rule.ttl = ttl;
  return rule;
}

ExchangeRequest Request(std::string token) {
  return {.grant_type = kTokenExchangeGrant,
          .subject_token = std::move(token),
          .subject_token_type = kIdTokenType,
          .requested_token_type = ""};
}

RequestContext Anonymous() {
  RequestContext ctx;
  ctx.request_id = "req-exchange";
  ctx.surface = Surface::kRest;
  return ctx;
}

TEST(MatchExchangeRuleTest, TheFirstRuleWhoseIssuerAndEveryClaimMatchWins) {
  const std::vector<ExchangeRule> rules = {
      Rule(kGithub, {{"repository", "acme/platform"}, {"ref", "refs/heads/main"}}, "acme", Role::kOwner),
      Rule(kGithub, {{"repository", "acme/platform"}}, "acme", Role::kViewer),
      Rule(kGitlab, {{"repository", "beta/infra"}}, "beta", Role::kOwner),
  };
  EXPECT_EQ(MatchExchangeRule(rules, GithubToken("acme/platform", "refs/heads/main")), &rules[0]);
  EXPECT_EQ(MatchExchangeRule(rules, GithubToken("acme/platform", "refs/pull/7/merge")), &rules[1]);
  EXPECT_EQ(MatchExchangeRule(rules, GithubToken("acme/platform-fork", "refs/heads/main")), nullptr);
  // The same claims from another issuer match only that issuer's rules.
  VerifiedSubjectToken from_gitlab = GithubToken("beta/infra", "main");
  EXPECT_EQ(MatchExchangeRule(rules, from_gitlab), nullptr);
  from_gitlab.issuer = kGitlab;
  EXPECT_EQ(MatchExchangeRule(rules, from_gitlab), &rules[2]);
  // A claim the token lacks never matches, not even an empty value.
  VerifiedSubjectToken bare;
  bare.issuer = kGithub;
  const std::vector<ExchangeRule> empty_value = {Rule(kGithub, {{"repository", ""}}, "acme", Role::kOwner)};
  EXPECT_EQ(MatchExchangeRule(empty_value, bare), nullptr);
  // A rule without claims (the configuration refuses one) admits nothing.
  const std::vector<ExchangeRule> no_claims = {Rule(kGithub, {}, "acme", Role::kOwner)};
  EXPECT_EQ(MatchExchangeRule(no_claims, GithubToken("acme/platform", "refs/heads/main")), nullptr);
}

class TokenExchangeTest : public CoreTest {
 protected:
  TokenExchangeTest() {
    MustCreate("acme");
    verifier->answers.emplace("main-token", GithubToken("acme/platform", "refs/heads/main"));
    verifier->answers.emplace("pr-token", GithubToken("acme/platform", "refs/pull/7/merge"));
    verifier->answers.emplace("other-repo-token", GithubToken("mallory/evil", "refs/heads/main"));
  }

  TokenExchangeService Service(std::vector<ExchangeRule> rules) {
    return TokenExchangeService(clock, tokens, store, verifier, std::move(rules));
  }

  std::shared_ptr<ScriptedVerifier> verifier = std::make_shared<ScriptedVerifier>();
  std::vector<ExchangeRule> rules = {
      Rule(kGithub, {{"repository", "acme/platform"}, {"ref", "refs/heads/main"}}, "acme", Role::kOwner),
      Rule(kGithub, {{"repository", "acme/platform"}}, "acme", Role::kViewer, std::chrono::minutes(5)),
  };
};

TEST_F(TokenExchangeTest, AnAdmittedTokenBecomesAShortLivedTokenOfTheRulesPrincipalAudited) {
  TokenExchangeService exchange = Service(rules);
  const TimePoint now = Now(clock);
  auto main = exchange.Exchange(Anonymous(), Request("main-token"));
  ASSERT_TRUE(main.ok()) << main.status().ToString();
  EXPECT_EQ(main->expires_in, std::chrono::minutes(15));
  EXPECT_EQ(main->issued.token.principal, "tenant:acme");
  EXPECT_EQ(main->issued.token.role, Role::kOwner);
  EXPECT_EQ(main->issued.token.expire_time, now + std::chrono::minutes(15));
  auto who = authenticator.Authenticate(main->issued.secret_text);
  ASSERT_TRUE(who.ok()) << who.status().ToString();
  EXPECT_EQ(who->tenant, "acme");
  EXPECT_EQ(who->role, Role::kOwner);

  // A pull request's token matches only the viewer rule: it may diff, not apply.
  auto pr = exchange.Exchange(Anonymous(), Request("pr-token"));
  ASSERT_TRUE(pr.ok()) << pr.status().ToString();
  EXPECT_EQ(pr->issued.token.role, Role::kViewer);
  EXPECT_EQ(pr->expires_in, std::chrono::minutes(5));

  const std::vector<AuditRecord> audit = Audit("tokens/" + main->issued.token.id);
  ASSERT_EQ(audit.size(), 1u);
  EXPECT_EQ(audit[0].action, "token.exchange");
  EXPECT_EQ(audit[0].principal, "tenant:acme");
  EXPECT_EQ(audit[0].surface, "rest");
  EXPECT_EQ(audit[0].request_id, "req-exchange");
  EXPECT_EQ(audit[0].detail,
            "issuer \"https://token.actions.githubusercontent.com\", subject "
            "\"repo:acme/platform:ref:refs/heads/main\", ref \"refs/heads/main\", repository "
            "\"acme/platform\"");
  // The secret appears nowhere but in the answer.
  EXPECT_EQ(main->issued.token.description.find(main->issued.secret_text), std::string::npos);
}

TEST_F(TokenExchangeTest, ARulesApplySetsScopeTheTokenItIssues) {
  ExchangeRule scoped = Rule(kGithub, {{"repository", "acme/platform"}}, "acme", Role::kOwner);
  scoped.principal.apply_sets = {"platform-prod"};
  TokenExchangeService exchange = Service({scoped});
  auto issued = exchange.Exchange(Anonymous(), Request("main-token"));
  ASSERT_TRUE(issued.ok()) << issued.status().ToString();
  EXPECT_EQ(issued->issued.token.apply_sets, (std::vector<std::string>{"platform-prod"}));
  auto who = authenticator.Authenticate(issued->issued.secret_text);
  ASSERT_TRUE(who.ok());
  EXPECT_EQ(who->apply_sets, (std::vector<std::string>{"platform-prod"}));
  EXPECT_EQ(RequireWriter(*who, "create virtual clusters").code(), Code::kPermissionDenied);
}

TEST_F(TokenExchangeTest, TheLifetimeIsCappedByTheTenantsTrustTier) {
  // shared caps credentials at a day: a rule asking for more gets the cap.
  TokenExchangeService exchange =
      Service({Rule(kGithub, {{"repository", "acme/platform"}}, "acme", Role::kOwner, std::chrono::hours(48))});
  auto issued = exchange.Exchange(Anonymous(), Request("main-token"));
  ASSERT_TRUE(issued.ok()) << issued.status().ToString();
  EXPECT_EQ(issued->expires_in, std::chrono::hours(24));
}

TEST_F(TokenExchangeTest, RefusalsTellTheClientNothingOfWhy) {
  TokenExchangeService exchange = Service(rules);
  for (const std::string token : {"forged-token", "other-repo-token"}) {
    auto refused = exchange.Exchange(Anonymous(), Request(token));
    EXPECT_EQ(refused.status().code(), Code::kUnauthenticated) << token;
    EXPECT_EQ(refused.status().message(),
              "the subject token was refused (septad's log says why, by this request's id)");
  }
  // An identity provider that cannot be reached is not the client's fault.
  verifier->answers.emplace("unreachable", Unavailable("the identity provider cannot be reached"));
  EXPECT_EQ(exchange.Exchange(Anonymous(), Request("unreachable")).status().code(), Code::kUnavailable);
  EXPECT_TRUE(Audit().empty() || Audit().back().action != "token.exchange");
}

TEST_F(TokenExchangeTest, AMalformedRequestNamesTheField) {
  TokenExchangeService exchange = Service(rules);
  const auto field_of = [&](ExchangeRequest request) {
    auto refused = exchange.Exchange(Anonymous(), request);
    EXPECT_EQ(refused.status().code(), Code::kInvalidArgument) << refused.status().ToString();
    return refused.status().violations().empty() ? std::string() : refused.status().violations()[0].field;
  };
  ExchangeRequest request = Request("main-token");
  request.grant_type = "client_credentials";
  EXPECT_EQ(field_of(request), "grant_type");
  request = Request("");
  EXPECT_EQ(field_of(request), "subject_token");
  request = Request("main-token");
  request.subject_token_type = "urn:ietf:params:oauth:token-type:saml2";
  EXPECT_EQ(field_of(request), "subject_token_type");
  request = Request("main-token");
  request.requested_token_type = "urn:ietf:params:oauth:token-type:refresh_token";
  EXPECT_EQ(field_of(request), "requested_token_type");
  // The JWT token type is as good as an ID token's.
  request = Request("main-token");
  request.subject_token_type = kJwtTokenType;
  request.requested_token_type = kAccessTokenType;
  EXPECT_TRUE(exchange.Exchange(Anonymous(), request).ok());
}

TEST_F(TokenExchangeTest, ATenantThatIsMissingOrSuspendedGetsNoToken) {
  TokenExchangeService missing = Service({Rule(kGithub, {{"repository", "acme/platform"}}, "gone", Role::kOwner)});
  auto refused = missing.Exchange(Anonymous(), Request("main-token"));
  EXPECT_EQ(refused.status().code(), Code::kFailedPrecondition) << refused.status().ToString();
  EXPECT_EQ(refused.status().message().find("gone"), std::string::npos);  // the configuration is not shown

  TenantUpdate suspend;
  suspend.state = TenantState::kSuspended;
  ASSERT_TRUE(tenants.Update(Admin(), "acme", suspend, "").ok());
  TokenExchangeService exchange = Service(rules);
  EXPECT_EQ(exchange.Exchange(Anonymous(), Request("main-token")).status().code(), Code::kFailedPrecondition);
  auto listed = tokens.List(Admin());
  ASSERT_TRUE(listed.ok());
  EXPECT_TRUE(listed->empty());
}

TEST_F(TokenExchangeTest, WithoutIdentityProvidersNothingIsExchanged) {
  TokenExchangeService exchange(clock, tokens, store, nullptr, rules);
  auto refused = exchange.Exchange(Anonymous(), Request("main-token"));
  EXPECT_EQ(refused.status().code(), Code::kFailedPrecondition);
  EXPECT_NE(refused.status().message().find("not configured"), std::string::npos);
}

}  // namespace
}  // namespace septa::core
