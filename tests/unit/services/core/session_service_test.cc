// The portal's sessions and sign-in codes (services/core/session_service.h):
// how long they live, what ends them, and that neither is a bearer token.
#include "services/core/session_service.h"

#include "services/core/auth.h"
#include "tests/unit/services/core/core_fixture.h"

namespace septa::core {
namespace {

using namespace std::chrono_literals;

class SessionServiceTest : public CoreTest {
 protected:
  SessionServiceTest() : sessions(store, clock, random, authenticator, {.ttl = 12h, .live_max = 3}) {}

  IssuedToken MustIssue(const std::string& principal, const std::string& ttl = "") {
    auto issued = tokens.Create(Admin(), {principal, "owner", ttl, ""});
    EXPECT_TRUE(issued.ok()) << issued.status().ToString();
    return issued.ok() ? *issued : IssuedToken{};
  }
  RequestContext ContextOf(const std::string& token_text) {
    auto who = authenticator.Authenticate(token_text);
    EXPECT_TRUE(who.ok()) << who.status().ToString();
    RequestContext ctx;
    if (who.ok()) ctx.principal = *who;
    ctx.request_id = "req";
    return ctx;
  }

  SessionService sessions;
};

TEST_F(SessionServiceTest, ASessionIsTheCookiesAndNeverABearerToken) {
  MustCreate("acme");
  const IssuedToken token = MustIssue("tenant:acme");
  auto session = sessions.SignIn(token.secret_text, "req");
  ASSERT_TRUE(session.ok()) << session.status().ToString();
  EXPECT_EQ(session->token.kind, TokenKind::kSession);
  EXPECT_EQ(session->token.parent_id, token.token.id);
  auto who = authenticator.AuthenticateSession(session->cookie_value);
  ASSERT_TRUE(who.ok()) << who.status().ToString();
  EXPECT_EQ(who->principal.tenant, "acme");
  EXPECT_EQ(who->principal.role, Role::kOwner);
  EXPECT_EQ(authenticator.Authenticate(session->cookie_value).status().message(), "invalid bearer token");
  EXPECT_EQ(authenticator.AuthenticateSession(token.secret_text).status().message(), "invalid session");
  // The CSRF token is the session's alone, and no function of what a page can read.
  EXPECT_EQ(session->csrf_token.size(), 43u);  // 256 bits, base64url
  EXPECT_EQ(SessionService::CsrfToken(session->cookie_value), session->csrf_token);
  auto another = sessions.SignIn(token.secret_text, "req");
  ASSERT_TRUE(another.ok());
  EXPECT_NE(another->csrf_token, session->csrf_token);
  EXPECT_EQ(SessionService::CsrfToken("not a session"), "");
  // Sessions are not API tokens to list or count.
  auto listed = tokens.List(Admin());
  ASSERT_TRUE(listed.ok());
  EXPECT_EQ(listed->size(), 1u);
}

TEST_F(SessionServiceTest, LifetimeIsCappedByTheTokenAndTheTier) {
  MustCreate("acme");
  const IssuedToken short_lived = MustIssue("tenant:acme", "1h");
  auto session = sessions.SignIn(short_lived.secret_text, "req");
  ASSERT_TRUE(session.ok());
  EXPECT_EQ(*session->token.expire_time, *short_lived.token.expire_time);

  const IssuedToken long_lived = MustIssue("tenant:acme");  // the shared tier's cap (24 h)
  auto capped = sessions.SignIn(long_lived.secret_text, "req");
  ASSERT_TRUE(capped.ok());
  EXPECT_EQ(*capped->token.expire_time - capped->token.create_time, 12h);

  clock.Advance(61min);
  EXPECT_EQ(authenticator.AuthenticateSession(session->cookie_value).status().message(), "session has expired");
  EXPECT_TRUE(authenticator.AuthenticateSession(capped->cookie_value).ok());
}

TEST_F(SessionServiceTest, RevokingTheTokenEndsItsSessions) {
  const IssuedToken token = MustIssue("admin");
  auto session = sessions.SignIn(token.secret_text, "req");
  ASSERT_TRUE(session.ok());
  ASSERT_TRUE(authenticator.AuthenticateSession(session->cookie_value).ok());  // cached now
  ASSERT_TRUE(tokens.Revoke(Admin(), token.token.id).ok());
  EXPECT_EQ(authenticator.AuthenticateSession(session->cookie_value).status().message(),
            "session has ended: the API token it was made from was revoked or expired");
  EXPECT_EQ(sessions.SignIn(token.secret_text, "req").status().code(), Code::kUnauthenticated);
}

TEST_F(SessionServiceTest, SigningOutEndsOnlyThatSession) {
  const IssuedToken token = MustIssue("admin");
  auto first = sessions.SignIn(token.secret_text, "req");
  auto second = sessions.SignIn(token.secret_text, "req");
  ASSERT_TRUE(first.ok() && second.ok());
  RequestContext ctx;
  ctx.principal = authenticator.AuthenticateSession(first->cookie_value)->principal;
  ASSERT_TRUE(sessions.SignOut(ctx).ok());
  EXPECT_EQ(authenticator.AuthenticateSession(first->cookie_value).status().message(), "session has been revoked");
  EXPECT_TRUE(authenticator.AuthenticateSession(second->cookie_value).ok());
  EXPECT_TRUE(authenticator.Authenticate(token.secret_text).ok());
  EXPECT_TRUE(sessions.SignOut(ctx).ok());                     // twice: nothing more
  EXPECT_EQ(Audit("sessions/" + first->token.id).size(), 2u);  // create, delete
}

TEST_F(SessionServiceTest, SigningInPastTheBoundEndsTheOldestSession) {
  const IssuedToken token = MustIssue("admin");
  std::vector<IssuedSession> made;
  for (int i = 0; i < 4; ++i) {
    auto s = sessions.SignIn(token.secret_text, "req");
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    made.push_back(*s);
    clock.Advance(1s);
  }
  EXPECT_EQ(authenticator.AuthenticateSession(made[0].cookie_value).status().message(), "session has been revoked");
  for (int i = 1; i < 4; ++i) EXPECT_TRUE(authenticator.AuthenticateSession(made[i].cookie_value).ok()) << i;
}

// Hostile tenant: the bounds are per principal, so a tenant that signs in
// and asks for codes without end evicts and exhausts only its own.
TEST_F(SessionServiceTest, ATenantSigningInWithoutEndTouchesNoOtherTenant) {
  MustCreate("attacker");
  MustCreate("victim");
  const IssuedToken victim_token = MustIssue("tenant:victim");
  auto victim = sessions.SignIn(victim_token.secret_text, "req");
  ASSERT_TRUE(victim.ok());
  auto victim_code = sessions.CreateSignInCode(ContextOf(victim_token.secret_text));
  ASSERT_TRUE(victim_code.ok());

  const IssuedToken attacker_token = MustIssue("tenant:attacker");
  for (int i = 0; i < 50; ++i) ASSERT_TRUE(sessions.SignIn(attacker_token.secret_text, "req").ok()) << i;
  int refused = 0;
  for (int i = 0; i < 20; ++i) refused += !sessions.CreateSignInCode(ContextOf(attacker_token.secret_text)).ok();
  EXPECT_EQ(refused, 12);  // 8 codes at most

  EXPECT_TRUE(authenticator.AuthenticateSession(victim->cookie_value).ok());
  EXPECT_TRUE(sessions.CreateSignInCode(ContextOf(victim_token.secret_text)).ok());
  EXPECT_TRUE(sessions.Redeem(victim_code->code, "req").ok());
}

TEST_F(SessionServiceTest, ASignInCodeWorksOnceWithinItsTime) {
  MustCreate("acme");
  const IssuedToken token = MustIssue("tenant:acme");
  auto code = sessions.CreateSignInCode(ContextOf(token.secret_text));
  ASSERT_TRUE(code.ok()) << code.status().ToString();
  EXPECT_EQ(*code->token.expire_time - code->token.create_time, 10min);
  EXPECT_EQ(authenticator.Authenticate(code->code).status().message(), "invalid bearer token");
  EXPECT_EQ(authenticator.AuthenticateSession(code->code).status().message(), "invalid session");

  auto session = sessions.Redeem(code->code, "req");
  ASSERT_TRUE(session.ok()) << session.status().ToString();
  EXPECT_EQ(session->token.parent_id, token.token.id);  // the API token's, not the code's
  EXPECT_EQ(session->token.principal, "tenant:acme");
  EXPECT_EQ(sessions.Redeem(code->code, "req").status().message(),
            "sign-in code has been used or revoked: ask for a new one");

  auto late = sessions.CreateSignInCode(ContextOf(token.secret_text));
  ASSERT_TRUE(late.ok());
  clock.Advance(11min);
  EXPECT_EQ(sessions.Redeem(late->code, "req").status().message(), "sign-in code has expired: ask for a new one");
  EXPECT_EQ(sessions.Redeem(token.secret_text, "req").status().message(), "invalid sign-in code");
  EXPECT_EQ(sessions.Redeem("nonsense", "req").status().message(), "invalid sign-in code");
}

TEST_F(SessionServiceTest, UnusedSignInCodesAreBounded) {
  const IssuedToken token = MustIssue("admin");
  const RequestContext ctx = ContextOf(token.secret_text);
  for (int i = 0; i < 8; ++i) ASSERT_TRUE(sessions.CreateSignInCode(ctx).ok()) << i;
  auto refused = sessions.CreateSignInCode(ctx);
  EXPECT_EQ(refused.status().code(), Code::kResourceExhausted);
  clock.Advance(11min);  // expired ones no longer count
  EXPECT_TRUE(sessions.CreateSignInCode(ctx).ok());
}

}  // namespace
}  // namespace septa::core
