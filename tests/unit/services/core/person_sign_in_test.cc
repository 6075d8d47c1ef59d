// People's sign-in to the portal (services/core/person_sign_in.h) against a
// scripted provider and verifier: the code flow's state, PKCE and nonce
// spent once, the browser binding, the open redirect refused, the bound on
// sign-ins under way, and a session's renewal: a group removed at the
// provider ends at the next renewal, a refused refresh ends the session, a
// provider that cannot be reached leaves the session its identity until it
// expires. The real provider and browser: web/e2e/sso.test.mjs.
#include "services/core/person_sign_in.h"

#include <gmock/gmock.h>

#include <deque>
#include <map>

#include "services/core/crypto.h"
#include "tests/unit/services/core/core_fixture.h"
#include "tests/unit/services/core/scripted_people.h"

namespace septa::core {
namespace {

using namespace std::chrono_literals;
using test::ScriptedPeople;
using testing::ElementsAre;
using testing::HasSubstr;

constexpr char kSsoIssuer[] = "https://idp.acme.test";
constexpr char kRedirect[] = "https://septa.acme.test/v1/sessions/oidc/callback";

class ScriptedProviders final : public SignInProviders {
 public:
  std::vector<SignInProviderInfo> List() const override { return {{.issuer = kSsoIssuer, .name = "Acme"}}; }
  Result<std::string> AuthorizationUrl(const std::string& issuer, const AuthorizationRequest& request) override {
    if (down) return Unavailable("discovery: connection refused");
    requests.push_back(request);
    return std::string("https://idp.acme.test/auth?state=") + request.state;
  }
  Result<ProviderTokens> RedeemCode(const std::string& issuer, const std::string& code,
                                    const std::string& code_verifier, const std::string& redirect_uri) override {
    redeemed.push_back({code, code_verifier, redirect_uri});
    if (down) return Unavailable("the token endpoint: connection refused");
    auto found = codes.find(code);
    if (found == codes.end()) return Unauthenticated("invalid_grant (scripted)");
    ProviderTokens tokens = found->second;
    codes.erase(found);  // a code is good once
    return tokens;
  }
  Result<ProviderTokens> Refresh(const std::string& issuer, const std::string& refresh_token) override {
    refreshed.push_back(refresh_token);
    if (refreshes.empty()) return Internal("no scripted refresh");
    Result<ProviderTokens> next = refreshes.front();
    refreshes.pop_front();
    return next;
  }
  Status RevokeRefreshToken(const std::string& issuer, const std::string& refresh_token) override {
    revoked.push_back(refresh_token);
    return Status::Ok();
  }
  Result<std::string> EndSessionUrl(const std::string& issuer, const std::string& id_token,
                                    const std::string& post_logout_redirect_uri) override {
    return "https://idp.acme.test/session/end?id_token_hint=" + id_token;
  }

  struct Redeemed {
    std::string code, verifier, redirect_uri;
  };
  bool down = false;
  std::vector<AuthorizationRequest> requests;
  std::map<std::string, ProviderTokens> codes;
  std::vector<Redeemed> redeemed;
  std::deque<Result<ProviderTokens>> refreshes;
  std::vector<std::string> refreshed, revoked;
};

class PersonSignInTest : public CoreTest {
 protected:
  PersonSignInTest()
      : sign_in(store, clock, random, providers, people,
                {.session_ttl = 12h,
                 .live_max = 2,
                 .sign_in_ttl = 10min,
                 .pending_max = 3,
                 .renew_retry = 30s,
                 .cache_ttl = 0ms}) {}

  Person Alice(std::vector<std::string> groups, std::chrono::seconds ttl = 300s) {
    return Person{
        .issuer = kSsoIssuer, .user = "alice@acme.test", .groups = std::move(groups), .expire_time = clock.Now() + ttl};
  }
  // The provider will answer `code` with an ID token naming `person` (for
  // the nonce of the last sign-in begun) and `refresh_token`.
  void ScriptCode(const std::string& code, const std::string& id_token, const Person& person,
                  const std::string& refresh_token = "rt-1") {
    providers.codes[code] = ProviderTokens{.id_token = id_token, .refresh_token = refresh_token};
    people.answers.insert_or_assign(id_token, person);
    people.nonces[id_token] = providers.requests.back().nonce;
  }
  BegunSignIn MustBegin(const std::string& return_to = "/t/acme") {
    auto begun = sign_in.Begin(kSsoIssuer, return_to, kRedirect, client_, "req-begin");
    EXPECT_TRUE(begun.ok()) << begun.status().ToString();
    return begun.ok() ? *begun : BegunSignIn{};
  }
  // A whole sign-in of `person`: its session's cookie.
  std::string MustSignIn(const Person& person, const std::string& id_token = "id-1",
                         const std::string& refresh_token = "rt-1") {
    const BegunSignIn begun = MustBegin();
    ScriptCode("code-" + id_token, id_token, person, refresh_token);
    const SignInOutcome outcome =
        sign_in.Finish({.state = providers.requests.back().state, .code = "code-" + id_token, .error = ""},
                       begun.browser_binding, kRedirect, "req-cb");
    EXPECT_TRUE(outcome.opened) << SignInFailureName(outcome.failure) << ": " << outcome.reason;
    return outcome.opened ? outcome.opened->cookie_value : "";
  }
  int PendingSignIns() {
    int n = -1;
    EXPECT_TRUE(store
                    .Transact(TxMode::kReadOnly,
                              [&](Tx& tx) -> Status {
                                SEPTA_ASSIGN_OR_RETURN(n, tx.PersonSessions().CountSignIns(clock.Now()));
                                return Status::Ok();
                              })
                    .ok());
    return n;
  }

  ScriptedProviders providers;
  ScriptedPeople people;
  PersonSignIn sign_in;
  std::string client_ = "192.0.2.1";  // the address sign-ins are begun from
};

TEST_F(PersonSignInTest, AReturnPathThatLeavesThePortalIsRefusedNotRepaired) {
  for (const char* bad :
       {"https://evil.example/", "//evil.example/x", "/\\evil.example", "", "relative", "/a b", "/tab\there"}) {
    auto begun = sign_in.Begin(kSsoIssuer, bad, kRedirect, "192.0.2.1", "req");
    EXPECT_EQ(begun.status().code(), Code::kInvalidArgument) << bad;
    EXPECT_THAT(begun.status().message(), HasSubstr("return_to")) << bad;
  }
  EXPECT_THAT(sign_in.Begin("https://other.example", "/", kRedirect, "192.0.2.1", "req").status().message(),
              HasSubstr("signs no one in to the portal"));
  EXPECT_TRUE(CheckReturnTo("return_to", "/t/acme/vclusters?x=1#y").ok());
  EXPECT_EQ(PendingSignIns(), 0);  // nothing kept of a refused start
  EXPECT_TRUE(providers.requests.empty());
}

TEST_F(PersonSignInTest, ASignInRedeemsItsCodeWithThePkceVerifierOnceAndOpensASession) {
  const BegunSignIn begun = MustBegin("/t/acme/vclusters");
  ASSERT_EQ(providers.requests.size(), 1u);
  const AuthorizationRequest& sent = providers.requests[0];
  EXPECT_EQ(begun.authorization_url, "https://idp.acme.test/auth?state=" + sent.state);
  EXPECT_EQ(sent.redirect_uri, kRedirect);
  EXPECT_EQ(sent.state.size(), 43u);  // 256 bits each
  EXPECT_EQ(sent.nonce.size(), 43u);
  EXPECT_NE(sent.state, sent.nonce);
  EXPECT_EQ(PendingSignIns(), 1);
  ScriptCode("code-1", "id-1", Alice({"platform"}));

  const SignInOutcome outcome =
      sign_in.Finish({.state = sent.state, .code = "code-1", .error = ""}, begun.browser_binding, kRedirect, "req");
  ASSERT_TRUE(outcome.opened) << outcome.reason;
  EXPECT_EQ(outcome.opened->return_to, "/t/acme/vclusters");
  ASSERT_EQ(providers.redeemed.size(), 1u);
  // RFC 7636 4.6: the provider hashes the verifier to the challenge it was sent.
  EXPECT_EQ(Sha256Base64Url(providers.redeemed[0].verifier), sent.code_challenge);
  EXPECT_EQ(providers.redeemed[0].redirect_uri, kRedirect);
  EXPECT_EQ(PendingSignIns(), 0);

  auto person = sign_in.Authenticate(outcome.opened->cookie_value, "req");
  ASSERT_TRUE(person.ok()) << person.status().ToString();
  EXPECT_EQ(person->person->user, "alice@acme.test");
  EXPECT_THAT(person->person->groups, ElementsAre("platform"));
  EXPECT_EQ(person->expire_time, clock.Now() + 12h);
  EXPECT_EQ(sign_in.Authenticate(outcome.opened->cookie_value + "x", "req").status().code(), Code::kUnauthenticated);
  EXPECT_EQ(sign_in.Authenticate("septa_person_0123456789abcdef_" + std::string(43, 'x'), "req").status().message(),
            "invalid session");

  // The same callback again (a replayed code): the sign-in is spent.
  const SignInOutcome replay =
      sign_in.Finish({.state = sent.state, .code = "code-1", .error = ""}, begun.browser_binding, kRedirect, "req");
  EXPECT_FALSE(replay.opened);
  EXPECT_EQ(replay.failure, SignInFailure::kExpired);
  EXPECT_EQ(providers.redeemed.size(), 1u);  // never sent to the provider again
  const std::vector<AuditRecord> audit = Audit();
  ASSERT_FALSE(audit.empty());
  EXPECT_EQ(audit[0].action, "session.create");
  EXPECT_EQ(audit[0].principal, "user:alice@acme.test");
}

TEST_F(PersonSignInTest, AWrongStateAnotherBrowserADenialAndAnotherNonceOpenNothing) {
  BegunSignIn begun = MustBegin();
  ScriptCode("code-1", "id-1", Alice({}));
  EXPECT_EQ(sign_in.Finish({.state = "made-up", .code = "code-1", .error = ""}, begun.browser_binding, kRedirect, "r")
                .failure,
            SignInFailure::kExpired);
  EXPECT_EQ(sign_in.Finish({.state = "", .code = "code-1", .error = ""}, begun.browser_binding, kRedirect, "r").failure,
            SignInFailure::kExpired);
  // Another browser (login CSRF: the attacker's callback in the victim's
  // browser): refused, and the sign-in is spent.
  const std::string state = providers.requests.back().state;
  EXPECT_EQ(sign_in.Finish({.state = state, .code = "code-1", .error = ""}, "another-browser", kRedirect, "r").failure,
            SignInFailure::kBrowserMismatch);
  EXPECT_EQ(
      sign_in.Finish({.state = state, .code = "code-1", .error = ""}, begun.browser_binding, kRedirect, "r").failure,
      SignInFailure::kExpired);
  EXPECT_TRUE(providers.redeemed.empty());

  begun = MustBegin();
  EXPECT_EQ(sign_in
                .Finish({.state = providers.requests.back().state, .code = "", .error = "access_denied"},
                        begun.browser_binding, kRedirect, "r")
                .failure,
            SignInFailure::kDenied);

  // An ID token minted for another sign-in (its nonce) is refused.
  begun = MustBegin();
  providers.codes["code-2"] = {.id_token = "id-1", .refresh_token = ""};  // id-1 carries the first sign-in's nonce
  const SignInOutcome other_nonce = sign_in.Finish(
      {.state = providers.requests.back().state, .code = "code-2", .error = ""}, begun.browser_binding, kRedirect, "r");
  EXPECT_EQ(other_nonce.failure, SignInFailure::kRefused);
  EXPECT_THAT(other_nonce.reason, HasSubstr("nonce"));

  // A code the provider refuses (spent, or the wrong verifier).
  begun = MustBegin();
  EXPECT_EQ(sign_in
                .Finish({.state = providers.requests.back().state, .code = "unknown", .error = ""},
                        begun.browser_binding, kRedirect, "r")
                .failure,
            SignInFailure::kRefused);
  EXPECT_EQ(PendingSignIns(), 0);
}

TEST_F(PersonSignInTest, AProviderDownAtSignInSaysSoAndAnOldSignInHasExpired) {
  providers.down = true;
  EXPECT_EQ(sign_in.Begin(kSsoIssuer, "/", kRedirect, client_, "r").status().code(), Code::kUnavailable);
  providers.down = false;
  BegunSignIn begun = MustBegin();
  ScriptCode("code-1", "id-1", Alice({}));
  providers.down = true;
  EXPECT_EQ(sign_in
                .Finish({.state = providers.requests.back().state, .code = "code-1", .error = ""},
                        begun.browser_binding, kRedirect, "r")
                .failure,
            SignInFailure::kProviderUnavailable);
  providers.down = false;
  begun = MustBegin();
  clock.Advance(11min);
  EXPECT_EQ(sign_in
                .Finish({.state = providers.requests.back().state, .code = "code-1", .error = ""},
                        begun.browser_binding, kRedirect, "r")
                .failure,
            SignInFailure::kExpired);
}

// Anyone may begin a sign-in: one address flooding them takes no one
// else's, and all addresses together are bounded too.
TEST_F(PersonSignInTest, SignInsUnderWayAreBoundedPerAddressAndInAll) {
  PersonSignIn bounded(store, clock, random, providers, people,
                       {.pending_per_client_max = 2, .pending_max = 4, .cache_ttl = 0ms});
  const auto begin = [&](const std::string& client) {
    return bounded.Begin(kSsoIssuer, "/", kRedirect, client, "r").status();
  };
  ASSERT_TRUE(begin("198.51.100.66").ok());
  ASSERT_TRUE(begin("198.51.100.66").ok());
  const Status flood = begin("198.51.100.66");
  EXPECT_EQ(flood.code(), Code::kResourceExhausted);
  EXPECT_THAT(flood.message(), HasSubstr("2 sign-ins begun from this address"));
  // The victim, from another address, signs in all the same.
  const BegunSignIn begun = [&] {
    auto b = bounded.Begin(kSsoIssuer, "/t/acme", kRedirect, "192.0.2.1", "r");
    EXPECT_TRUE(b.ok()) << b.status().ToString();
    return b.ok() ? *b : BegunSignIn{};
  }();
  ScriptCode("code-v", "id-v", Alice({"platform"}));
  EXPECT_TRUE(bounded
                  .Finish({.state = providers.requests.back().state, .code = "code-v", .error = ""},
                          begun.browser_binding, kRedirect, "r")
                  .opened);
  ASSERT_TRUE(begin("203.0.113.1").ok());
  ASSERT_TRUE(begin("203.0.113.2").ok());  // with the flood's two, four under way
  EXPECT_THAT(begin("203.0.113.3").message(), HasSubstr("4 sign-ins are under way"));
  clock.Advance(11min);  // the abandoned ones expire and no longer count
  EXPECT_TRUE(begin("198.51.100.66").ok());
}

TEST_F(PersonSignInTest, AnIdentityIsRenewedWhenItsIdTokenExpiresAndAGroupRemovedThereIsGone) {
  const std::string cookie = MustSignIn(Alice({"platform", "gpu-users"}, 300s));
  clock.Advance(299s);
  ASSERT_TRUE(sign_in.Authenticate(cookie, "r").ok());
  EXPECT_TRUE(providers.refreshed.empty());  // not due yet
  clock.Advance(2s);
  people.answers.insert_or_assign("id-2", Alice({"gpu-users"}, 300s));
  providers.refreshes.push_back(ProviderTokens{.id_token = "id-2", .refresh_token = "rt-2"});
  auto renewed = sign_in.Authenticate(cookie, "r");
  ASSERT_TRUE(renewed.ok()) << renewed.status().ToString();
  EXPECT_THAT(renewed->person->groups, ElementsAre("gpu-users"));
  EXPECT_THAT(providers.refreshed, ElementsAre("rt-1"));
  // The rotated refresh token is the next renewal's.
  clock.Advance(301s);
  people.answers.insert_or_assign("id-3", Alice({}, 300s));
  providers.refreshes.push_back(ProviderTokens{.id_token = "id-3", .refresh_token = ""});  // not rotated
  ASSERT_TRUE(sign_in.Authenticate(cookie, "r").ok());
  clock.Advance(301s);
  providers.refreshes.push_back(Unauthenticated("invalid_grant: the grant was revoked"));
  EXPECT_THAT(providers.refreshed, ElementsAre("rt-1", "rt-2"));
  // The provider no longer signs her in: the session ends, for good.
  auto ended = sign_in.Authenticate(cookie, "r");
  EXPECT_EQ(ended.status().code(), Code::kUnauthenticated);
  EXPECT_THAT(ended.status().message(), HasSubstr("the identity provider ended this sign-in"));
  EXPECT_THAT(providers.refreshed, ElementsAre("rt-1", "rt-2", "rt-2"));
  EXPECT_THAT(sign_in.Authenticate(cookie, "r").status().message(), HasSubstr("signed out"));
  EXPECT_EQ(providers.refreshed.size(), 3u);
  EXPECT_EQ(Audit()[0].action, "session.end");
}

TEST_F(PersonSignInTest, WhileTheProviderCannotBeReachedTheSessionKeepsItsIdentityUntilItExpires) {
  const std::string cookie = MustSignIn(Alice({"platform"}, 300s));
  clock.Advance(301s);
  providers.refreshes.push_back(Unavailable("the token endpoint: connection refused"));
  auto held = sign_in.Authenticate(cookie, "r");
  ASSERT_TRUE(held.ok()) << held.status().ToString();
  EXPECT_THAT(held->person->groups, ElementsAre("platform"));
  // Not asked again at every request: after renew_retry.
  clock.Advance(10s);
  ASSERT_TRUE(sign_in.Authenticate(cookie, "r").ok());
  EXPECT_EQ(providers.refreshed.size(), 1u);
  clock.Advance(21s);
  providers.refreshes.push_back(Unavailable("still down"));
  ASSERT_TRUE(sign_in.Authenticate(cookie, "r").ok());
  EXPECT_EQ(providers.refreshed.size(), 2u);
  clock.Advance(12h);
  EXPECT_THAT(sign_in.Authenticate(cookie, "r").status().message(), HasSubstr("session has expired"));
}

TEST_F(PersonSignInTest, ARenewedTokenForAnotherPersonOrWithoutARefreshTokenEndsTheSession) {
  const std::string cookie = MustSignIn(Alice({}, 300s));
  clock.Advance(301s);
  Person mallory = Alice({});
  mallory.user = "mallory@acme.test";
  people.answers.insert_or_assign("id-m", mallory);
  providers.refreshes.push_back(ProviderTokens{.id_token = "id-m", .refresh_token = "rt-m"});
  EXPECT_EQ(sign_in.Authenticate(cookie, "r").status().code(), Code::kUnauthenticated);
  EXPECT_THAT(sign_in.Authenticate(cookie, "r").status().message(), HasSubstr("signed out"));

  // No refresh token: the session is the ID token's lifetime.
  const std::string short_lived = MustSignIn(Alice({}, 300s), "id-2", "");
  ASSERT_TRUE(sign_in.Authenticate(short_lived, "r").ok());
  clock.Advance(301s);
  EXPECT_THAT(sign_in.Authenticate(short_lived, "r").status().message(), HasSubstr("session has expired"));
}

TEST_F(PersonSignInTest, SigningOutEndsTheSessionHereAndAtTheProvider) {
  const std::string cookie = MustSignIn(Alice({}));
  auto who = sign_in.Authenticate(cookie, "r");
  ASSERT_TRUE(who.ok());
  auto url = sign_in.SignOut(who->session_id, "https://septa.acme.test/", "r");
  ASSERT_TRUE(url.ok()) << url.status().ToString();
  EXPECT_EQ(*url, "https://idp.acme.test/session/end?id_token_hint=id-1");
  EXPECT_THAT(providers.revoked, ElementsAre("rt-1"));
  EXPECT_THAT(sign_in.Authenticate(cookie, "r").status().message(), HasSubstr("signed out"));
  EXPECT_EQ(Audit()[0].action, "session.delete");
}

TEST_F(PersonSignInTest, APersonsOldestSessionEndsPastTheBound) {
  const std::string first = MustSignIn(Alice({}), "id-1");
  clock.Advance(1s);
  const std::string second = MustSignIn(Alice({}), "id-2");
  clock.Advance(1s);
  const std::string third = MustSignIn(Alice({}), "id-3");
  EXPECT_THAT(sign_in.Authenticate(first, "r").status().message(), HasSubstr("signed out"));
  EXPECT_TRUE(sign_in.Authenticate(second, "r").ok());
  EXPECT_TRUE(sign_in.Authenticate(third, "r").ok());
}

TEST_F(PersonSignInTest, AForgottenSessionIsReadAgain) {
  PersonSignIn cached(store, clock, random, providers, people, {.cache_ttl = 60s});
  const std::string cookie = MustSignIn(Alice({}));
  auto who = cached.Authenticate(cookie, "r");
  ASSERT_TRUE(who.ok());
  // Signed out through another replica (sign_in here): told as a revocation of its id.
  ASSERT_TRUE(sign_in.SignOut(who->session_id, "https://septa.acme.test/", "r").ok());
  EXPECT_TRUE(cached.Authenticate(cookie, "r").ok());  // cached for a minute...
  cached.Forget(Revocation{.token_id = who->session_id, .principal = ""});
  EXPECT_THAT(cached.Authenticate(cookie, "r").status().message(), HasSubstr("signed out"));  // ...unless told
}

}  // namespace
}  // namespace septa::core
