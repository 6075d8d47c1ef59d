// The relying party's calls to a provider that septactl's login and
// septad's portal sign-in share (the device flow's own: tests/unit/
// services/cli/device_flow_test.cc), against a scripted provider: the
// authorization code grant with PKCE, a confidential client's HTTP Basic
// credentials, and the endpoints discovery reads for a browser's sign-in.
#include "services/oidc/oauth_client.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "services/base/base64.h"
#include "tests/unit/services/cli/fake_provider.h"

namespace septa::oidc {
namespace {

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
using testing::Not;

class OauthClientTest : public testing::Test {
 protected:
  ProviderEndpoints Endpoints() {
    auto provider = Discover(idp_, kIssuer);
    EXPECT_TRUE(provider.ok()) << provider.status().ToString();
    return provider.ok() ? *provider : ProviderEndpoints{};
  }
  std::string Fresh() const { return IdToken(clock_.Now(), seconds(3600)); }

  FakeProvider idp_;
  JumpClock clock_;
};

TEST_F(OauthClientTest, DiscoveryReadsTheEndpointsOfABrowsersSignIn) {
  const ProviderEndpoints provider = Endpoints();
  EXPECT_EQ(provider.authorization_endpoint, test::kAuthorizationEndpoint);
  EXPECT_EQ(provider.end_session_endpoint, test::kEndSessionEndpoint);
  idp_.discovery["end_session_endpoint"] = "http://idp.example.test/logout";  // plain http off loopback
  EXPECT_THAT(Discover(idp_, kIssuer).status().message(), HasSubstr("end_session_endpoint must be https"));
  idp_.discovery["end_session_endpoint"] = test::kEndSessionEndpoint;
  idp_.discovery["authorization_endpoint"] = "not a url";
  EXPECT_THAT(Discover(idp_, kIssuer).status().message(), HasSubstr("authorization_endpoint is not an http(s) URL"));
}

TEST_F(OauthClientTest, ACodeIsRedeemedWithItsVerifierAndRedirectUriByTheConfidentialClient) {
  const ProviderEndpoints provider = Endpoints();
  idp_.token.push_back(TokenReply(Fresh(), "rt-1"));
  auto tokens = RedeemCode(idp_, provider, {.id = kClientId, .secret = "s3cret/+"}, "code-1", "verifier-1",
                           "https://septa.example/v1/sessions/oidc/callback", clock_);
  ASSERT_TRUE(tokens.ok()) << tokens.status().ToString();
  EXPECT_EQ(tokens->refresh_token, "rt-1");
  EXPECT_EQ(tokens->subject, "alice@acme.test");
  ASSERT_EQ(idp_.posts.size(), 1u);
  EXPECT_EQ(idp_.posts[0].form,
            "grant_type=authorization_code&code=code-1&code_verifier=verifier-1&redirect_uri=https%3A%2F%2Fsepta."
            "example%2Fv1%2Fsessions%2Foidc%2Fcallback");
  // RFC 6749 2.3.1: id and secret form-encoded, then Basic; no secret in the form.
  EXPECT_EQ(idp_.posts[0].authorization, "Basic " + base::Base64Encode("septactl:s3cret%2F%2B"));
}

TEST_F(OauthClientTest, APublicClientNamesItselfInTheFormAndSendsNoCredentials) {
  const ProviderEndpoints provider = Endpoints();
  idp_.token.push_back(TokenReply(Fresh(), "rt-2"));
  ASSERT_TRUE(Refresh(idp_, provider, {.id = kClientId}, "rt-1", clock_).ok());
  ASSERT_EQ(idp_.posts.size(), 1u);
  EXPECT_EQ(idp_.posts[0].form, "grant_type=refresh_token&refresh_token=rt-1&client_id=septactl");
  EXPECT_EQ(idp_.posts[0].authorization, "");
}

TEST_F(OauthClientTest, ARefusedCodeIsUnauthenticatedAndAProviderDownUnavailable) {
  const ProviderEndpoints provider = Endpoints();
  const OauthClient client{.id = kClientId, .secret = "s"};
  idp_.token.push_back(OauthError("invalid_grant"));  // spent, expired, another verifier
  auto spent = RedeemCode(idp_, provider, client, "c", "v", "https://septa.example/cb", clock_);
  EXPECT_EQ(spent.status().code(), Code::kUnauthenticated);
  EXPECT_THAT(spent.status().message(), HasSubstr("invalid_grant"));
  idp_.token.push_back(test::Json(503, {}));
  EXPECT_EQ(RedeemCode(idp_, provider, client, "c", "v", "https://septa.example/cb", clock_).status().code(),
            Code::kUnavailable);
  idp_.down = true;
  EXPECT_EQ(RedeemCode(idp_, provider, client, "c", "v", "https://septa.example/cb", clock_).status().code(),
            Code::kUnavailable);
}

TEST_F(OauthClientTest, AnIdTokenForAnotherClientIsRefusedAtTheCode) {
  const ProviderEndpoints provider = Endpoints();
  idp_.token.push_back(TokenReply(Fresh(), ""));  // aud septactl
  auto tokens = RedeemCode(idp_, provider, {.id = "portal", .secret = "s"}, "c", "v", "https://s.example/cb", clock_);
  EXPECT_EQ(tokens.status().code(), Code::kUnauthenticated);
  EXPECT_THAT(tokens.status().message(), HasSubstr("aud"));
  EXPECT_THAT(idp_.FormsTo(kTokenEndpoint), ElementsAre(Not(HasSubstr("client_secret"))));
}

}  // namespace
}  // namespace septa::oidc
