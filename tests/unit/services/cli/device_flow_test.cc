// The device flow's state machine (RFC 8628) against a scripted provider
// and a clock that jumps: every answer the token endpoint can give while
// septactl polls, discovery's checks, and the ID token's iss, aud and size.
#include "services/cli/device_flow.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/unit/services/cli/fake_provider.h"

namespace septa::cli {
namespace {

using oidc::ProviderReply;
using std::chrono::seconds;
using test::FakeProvider;
using test::IdToken;
using test::JumpClock;
using test::kClientId;
using test::kIssuer;
using test::kTokenEndpoint;
using test::OauthError;
using test::TokenReply;
using testing::ElementsAre;
using testing::HasSubstr;

class DeviceFlow : public testing::Test {
 protected:
  Result<Tokens> Poll(PollOptions options = {}) {
    auto provider = oidc::Discover(idp_, kIssuer);
    EXPECT_TRUE(provider.ok()) << provider.status().ToString();
    auto authorization = StartDeviceAuthorization(idp_, *provider, kClientId, "openid offline_access");
    EXPECT_TRUE(authorization.ok()) << authorization.status().ToString();
    return PollForTokens(idp_, *provider, kClientId, *authorization, clock_, options);
  }
  std::string Fresh() const { return IdToken(clock_.Now(), seconds(3600)); }

  FakeProvider idp_;
  JumpClock clock_;
};

TEST_F(DeviceFlow, PendingUntilApprovedThenTheTokens) {
  idp_.token.push_back(OauthError("authorization_pending"));
  idp_.token.push_back(OauthError("authorization_pending"));
  idp_.token.push_back(TokenReply(IdToken(clock_.Now() + seconds(15), seconds(3600)), "rt-1"));
  auto tokens = Poll();
  ASSERT_TRUE(tokens.ok()) << tokens.status().ToString();
  EXPECT_EQ(tokens->refresh_token, "rt-1");
  EXPECT_EQ(tokens->subject, "alice@acme.test");
  EXPECT_EQ(tokens->id_token_expiry, clock_.Now() + seconds(3600));
  EXPECT_THAT(clock_.sleeps(), ElementsAre(seconds(5), seconds(5), seconds(5)));
  EXPECT_THAT(idp_.FormsTo(test::kDeviceEndpoint), ElementsAre("client_id=septactl&scope=openid+offline_access"));
  const std::string poll =
      "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Adevice_code&device_code=dc-1&client_id=septactl";
  EXPECT_THAT(idp_.FormsTo(kTokenEndpoint), ElementsAre(poll, poll, poll));
}

TEST_F(DeviceFlow, SlowDownAddsFiveSecondsForGood) {
  std::vector<std::string> notes;
  idp_.token.push_back(OauthError("slow_down"));
  idp_.token.push_back(OauthError("authorization_pending"));
  idp_.token.push_back(OauthError("slow_down"));
  idp_.token.push_back(TokenReply(IdToken(clock_.Now() + seconds(35), seconds(3600)), "rt"));
  auto tokens = Poll({.note = [&](const std::string& note) { notes.push_back(note); }});
  ASSERT_TRUE(tokens.ok()) << tokens.status().ToString();
  EXPECT_THAT(clock_.sleeps(), ElementsAre(seconds(5), seconds(10), seconds(10), seconds(15)));
  EXPECT_THAT(notes, ElementsAre(HasSubstr("every 10 s"), HasSubstr("every 15 s")));
}

TEST_F(DeviceFlow, DeniedIsPermissionDenied) {
  idp_.token.push_back(OauthError("authorization_pending"));
  idp_.token.push_back(OauthError("access_denied"));
  auto tokens = Poll();
  EXPECT_EQ(tokens.status().code(), Code::kPermissionDenied);
  EXPECT_EQ(tokens.status().message(), "the sign-in was denied at the identity provider");
}

TEST_F(DeviceFlow, ExpiredTokenSaysLogInAgain) {
  idp_.token.push_back(OauthError("expired_token"));
  auto tokens = Poll();
  EXPECT_EQ(tokens.status().code(), Code::kDeadlineExceeded);
  EXPECT_THAT(tokens.status().message(), HasSubstr("run septactl login again"));
}

TEST_F(DeviceFlow, TheCodesExpiryEndsTheWaitWithoutAPollPastIt) {
  nlohmann::json answer = nlohmann::json::parse(idp_.device.front()->body);
  answer["expires_in"] = 12;
  idp_.device.front() = test::Json(200, answer);
  idp_.token.push_back(OauthError("authorization_pending"));
  idp_.token.push_back(OauthError("authorization_pending"));
  auto tokens = Poll();
  EXPECT_EQ(tokens.status().code(), Code::kDeadlineExceeded);
  EXPECT_THAT(tokens.status().message(), HasSubstr("the code expired before it was approved"));
  EXPECT_THAT(clock_.sleeps(), ElementsAre(seconds(5), seconds(5)));
  EXPECT_EQ(idp_.FormsTo(kTokenEndpoint).size(), 2u);
}

TEST_F(DeviceFlow, MaxWaitEndsTheWait) {
  for (int i = 0; i < 3; ++i) idp_.token.push_back(OauthError("authorization_pending"));
  auto tokens = Poll({.max_wait = seconds(17)});
  EXPECT_EQ(tokens.status().code(), Code::kDeadlineExceeded);
  EXPECT_EQ(tokens.status().message(), "gave up waiting for the approval after 17 s");
  EXPECT_EQ(idp_.FormsTo(kTokenEndpoint).size(), 3u);
}

TEST_F(DeviceFlow, CtrlCEndsTheWaitAtTheNextSleep) {
  std::stop_source interrupt;
  interrupt.request_stop();
  auto tokens = Poll({.stop = interrupt.get_token()});
  EXPECT_EQ(tokens.status().code(), Code::kCancelled);
  EXPECT_TRUE(idp_.FormsTo(kTokenEndpoint).empty());
}

TEST_F(DeviceFlow, OneFailedPollIsToldAndPolledOnThreeInARowFail) {
  std::vector<std::string> notes;
  idp_.token.push_back(Unavailable("POST https://idp.example.test/token: Connection refused"));
  idp_.token.push_back(TokenReply(Fresh(), "rt"));
  auto tokens = Poll({.note = [&](const std::string& note) { notes.push_back(note); }});
  ASSERT_TRUE(tokens.ok()) << tokens.status().ToString();
  EXPECT_THAT(notes, ElementsAre(HasSubstr("Connection refused")));

  idp_.device.push_back(FakeProvider().device.front());
  idp_.token.push_back(ProviderReply{503, "busy"});
  idp_.token.push_back(Unavailable("reset"));
  idp_.token.push_back(ProviderReply{502, ""});
  auto failed = Poll();
  EXPECT_EQ(failed.status().code(), Code::kUnavailable);
  EXPECT_EQ(failed.status().message(), "the token endpoint failed 3 polls in a row: HTTP 502");
}

TEST_F(DeviceFlow, AnAnswerThatIsNotJsonIsNamed) {
  idp_.token.push_back(ProviderReply{200, "<html>gateway</html>"});
  auto tokens = Poll();
  EXPECT_EQ(tokens.status().code(), Code::kUnavailable);
  EXPECT_THAT(tokens.status().message(), HasSubstr("the token endpoint answered HTTP 200 without a JSON object"));
}

TEST_F(DeviceFlow, AnotherOauthErrorIsNamedWithItsDescription) {
  idp_.token.push_back(test::Json(400, {{"error", "invalid_client"}, {"error_description", "no such\nclient"}}));
  auto tokens = Poll();
  EXPECT_EQ(tokens.status().code(), Code::kUnauthenticated);
  EXPECT_EQ(tokens.status().message(), R"(the token endpoint answered HTTP 400 "invalid_client" (no such\nclient))");
}

TEST_F(DeviceFlow, TheIdTokenMustBeTheIssuersForThisClient) {
  const auto iat = std::chrono::duration_cast<seconds>(clock_.Now().time_since_epoch()).count() + 5;
  const nlohmann::json good = {{"iss", kIssuer}, {"aud", kClientId}, {"sub", "a"}, {"iat", iat}, {"exp", iat + 60}};
  struct Case {
    nlohmann::json patch;
    std::string expected;
  };
  for (const Case& c :
       {Case{{{"iss", "https://evil.example"}}, "\"iss\""}, Case{{{"aud", "portal"}}, "\"aud\""},
        Case{{{"aud", {"portal", "other"}}}, "\"aud\""}, Case{{{"exp", iat - 3600}}, "token expired at"}}) {
    idp_ = FakeProvider();
    nlohmann::json claims = good;
    claims.update(c.patch);
    idp_.token.push_back(TokenReply(test::Jwt(claims), "rt"));
    auto tokens = Poll();
    EXPECT_EQ(tokens.status().code(), Code::kUnauthenticated) << c.patch;
    EXPECT_THAT(tokens.status().message(), HasSubstr("the provider's ID token: " + c.expected)) << c.patch;
  }
  idp_ = FakeProvider();
  nlohmann::json audiences = good;
  audiences["aud"] = {"other", kClientId};
  idp_.token.push_back(TokenReply(test::Jwt(audiences), "rt"));
  EXPECT_TRUE(Poll().ok());
}

TEST_F(DeviceFlow, AnIdTokenThatIsNoJwtOrHugeIsRefused) {
  idp_.token.push_back(TokenReply("not-a-jwt", "rt"));
  EXPECT_THAT(Poll().status().message(), HasSubstr("the provider's ID token:"));
  idp_ = FakeProvider();
  const auto iat = std::chrono::duration_cast<seconds>(clock_.Now().time_since_epoch()).count() + 5;
  idp_.token.push_back(TokenReply(test::Jwt({{"iss", kIssuer},
                                             {"aud", kClientId},
                                             {"exp", iat + 60},
                                             {"groups", std::vector<std::string>(8000, "a-long-group-name")}}),
                                  "rt"));
  auto huge = Poll();
  EXPECT_EQ(huge.status().code(), Code::kUnauthenticated);
  EXPECT_THAT(huge.status().message(), HasSubstr("the provider's ID token:"));
}

TEST_F(DeviceFlow, NoIdTokenAsksForTheOpenidScope) {
  idp_.token.push_back(test::Json(200, {{"access_token", "at"}, {"token_type", "Bearer"}}));
  EXPECT_THAT(Poll().status().message(), HasSubstr("does the scope include openid?"));
}

TEST_F(DeviceFlow, DiscoveryMustNameTheIssuerAndHttpsEndpoints) {
  EXPECT_TRUE(oidc::Discover(idp_, kIssuer).ok());
  idp_.discovery["issuer"] = "https://idp.example.test/";
  auto other = oidc::Discover(idp_, kIssuer);
  EXPECT_EQ(other.status().code(), Code::kFailedPrecondition);
  EXPECT_THAT(other.status().message(), HasSubstr("names the issuer \"https://idp.example.test/\""));
  idp_.discovery["issuer"] = kIssuer;
  idp_.discovery["token_endpoint"] = "http://idp.example.test/token";
  EXPECT_THAT(oidc::Discover(idp_, kIssuer).status().message(),
              HasSubstr("the provider's token_endpoint must be https (http only on a loopback host)"));
  EXPECT_THAT(oidc::Discover(idp_, "http://idp.example.test").status().message(),
              HasSubstr("the issuer must be https (http only on a loopback host)"));
  idp_.discovery = "[]";
  EXPECT_THAT(oidc::Discover(idp_, kIssuer).status().message(), HasSubstr("without a JSON object"));
  EXPECT_THAT(oidc::Discover(idp_, "https://elsewhere.example").status().message(), HasSubstr("answered HTTP 404"));
  idp_.down = true;
  EXPECT_EQ(oidc::Discover(idp_, kIssuer).status().code(), Code::kUnavailable);
}

TEST_F(DeviceFlow, AProviderWithoutTheDeviceFlowOrThatRefusesTheClientIsNamed) {
  idp_.discovery.erase("device_authorization_endpoint");
  auto provider = oidc::Discover(idp_, kIssuer);
  ASSERT_TRUE(provider.ok());
  EXPECT_THAT(StartDeviceAuthorization(idp_, *provider, kClientId, "openid").status().message(),
              HasSubstr("offers no device flow"));
  idp_.discovery = FakeProvider().discovery;
  provider = oidc::Discover(idp_, kIssuer);
  idp_.device.front() = OauthError("unauthorized_client");
  EXPECT_THAT(StartDeviceAuthorization(idp_, *provider, kClientId, "openid").status().message(),
              HasSubstr("refused the client \"septactl\": \"unauthorized_client\""));
}

TEST_F(DeviceFlow, TheUserCodeAndAddressesShownMustBeHarmless) {
  auto provider = oidc::Discover(idp_, kIssuer);
  ASSERT_TRUE(provider.ok());
  const nlohmann::json good = nlohmann::json::parse(idp_.device.front()->body);
  for (const auto& [key, value] :
       std::vector<std::pair<std::string, std::string>>{{"user_code", "ABCD\x1b[2J"},
                                                        {"user_code", std::string(100, 'A')},
                                                        {"verification_uri", "javascript:alert(1)"},
                                                        {"verification_uri_complete", "http://phish.example/device"}}) {
    nlohmann::json answer = good;
    answer[key] = value;
    idp_.device.clear();
    idp_.device.push_back(test::Json(200, answer));
    auto authorization = StartDeviceAuthorization(idp_, *provider, kClientId, "openid");
    EXPECT_EQ(authorization.status().code(), key == "user_code" ? Code::kUnavailable : Code::kInvalidArgument) << key;
  }
}

TEST_F(DeviceFlow, RefreshRotatesAndKeepsTheOldTokenWhenNoneIsGiven) {
  auto provider = oidc::Discover(idp_, kIssuer);
  ASSERT_TRUE(provider.ok());
  idp_.token.push_back(TokenReply(Fresh(), "rt-2"));
  auto rotated = oidc::Refresh(idp_, *provider, {.id = kClientId}, "rt-1", clock_);
  ASSERT_TRUE(rotated.ok()) << rotated.status().ToString();
  EXPECT_EQ(rotated->refresh_token, "rt-2");
  EXPECT_THAT(idp_.FormsTo(kTokenEndpoint),
              ElementsAre("grant_type=refresh_token&refresh_token=rt-1&client_id=septactl"));
  idp_.token.push_back(TokenReply(Fresh(), ""));
  EXPECT_EQ(oidc::Refresh(idp_, *provider, {.id = kClientId}, "rt-2", clock_)->refresh_token, "rt-2");
  idp_.token.push_back(OauthError("invalid_grant"));
  auto refused = oidc::Refresh(idp_, *provider, {.id = kClientId}, "rt-2", clock_);
  EXPECT_EQ(refused.status().code(), Code::kUnauthenticated);
  EXPECT_THAT(refused.status().message(), HasSubstr("has expired or was revoked"));
  EXPECT_THAT(refused.status().message(), HasSubstr("has expired or was revoked"));
  idp_.token.push_back(ProviderReply{503, ""});
  EXPECT_EQ(oidc::Refresh(idp_, *provider, {.id = kClientId}, "rt-2", clock_).status().code(), Code::kUnavailable);
}

TEST_F(DeviceFlow, RevocationPostsTheRefreshTokenWithItsHint) {
  auto provider = oidc::Discover(idp_, kIssuer);
  ASSERT_TRUE(provider.ok());
  idp_.revocation.push_back(ProviderReply{200, ""});
  EXPECT_TRUE(oidc::RevokeRefreshToken(idp_, *provider, {.id = kClientId}, "rt/+1").ok());
  EXPECT_THAT(idp_.FormsTo(test::kRevocationEndpoint),
              ElementsAre("token=rt%2F%2B1&token_type_hint=refresh_token&client_id=septactl"));
  idp_.revocation.push_back(OauthError("invalid_client"));
  EXPECT_THAT(oidc::RevokeRefreshToken(idp_, *provider, {.id = kClientId}, "rt").message(),
              HasSubstr("invalid_client"));
  provider->revocation_endpoint.clear();
  EXPECT_EQ(oidc::RevokeRefreshToken(idp_, *provider, {.id = kClientId}, "rt").code(), Code::kFailedPrecondition);
}

TEST(IdTokenExpiry, ReadsExpWithoutChecks) {
  EXPECT_EQ(oidc::IdTokenExpiry(test::Jwt({{"exp", 1'800'000'000}})), TimePoint(seconds(1'800'000'000)));
  EXPECT_EQ(oidc::IdTokenExpiry(test::Jwt({{"sub", "a"}})), std::nullopt);
  EXPECT_EQ(oidc::IdTokenExpiry("garbage"), std::nullopt);
}

}  // namespace
}  // namespace septa::cli
