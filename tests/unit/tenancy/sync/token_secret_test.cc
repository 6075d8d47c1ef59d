#include "tenancy/sync/token_secret.h"

#include <gtest/gtest.h>

#include "tenancy/sync/bookkeeping.h"

namespace septa::tenancy::sync {
namespace {

using nlohmann::json;

json PodWithProjection(json token_source) {
  return {{"metadata", {{"name", "web"}, {"namespace", "team"}, {"uid", "uid-web"}}},
          {"spec",
           {{"serviceAccountName", "runner"},
            {"volumes",
             json::array({{{"name", "t"},
                           {"projected", {{"sources", json::array({{{"serviceAccountToken", token_source}}})}}}}})},
            {"containers", json::array({{{"name", "c"}, {"image", "busybox"}}})}}}};
}

TEST(TokenSecret, TheRequestIsBoundToThePodForItsAudienceAndTheLifetimeAskedCappedByTheTier) {
  TrustTier tier;
  tier.credential_ttl_max_seconds = 3600;
  const json request = TokenRequestFor(PodWithProjection({{"audience", "vault"}, {"expirationSeconds", 7200}}), tier);
  EXPECT_EQ(request["kind"], "TokenRequest");
  EXPECT_EQ(request["spec"]["audiences"], json::array({"vault"}));
  EXPECT_EQ(request["spec"]["expirationSeconds"], 3600);
  EXPECT_EQ(request["spec"]["boundObjectRef"],
            json({{"apiVersion", "v1"}, {"kind", "Pod"}, {"name", "web"}, {"uid", "uid-web"}}));

  const json plain = TokenRequestFor(PodWithProjection({{"expirationSeconds", 1200}}), tier);
  EXPECT_EQ(plain["spec"]["audiences"], json::array()) << "the API server's own audience";
  EXPECT_EQ(plain["spec"]["expirationSeconds"], 1200);
}

TEST(TokenSecret, TheServiceAccountIsThePodsOrDefault) {
  EXPECT_EQ(ServiceAccountOf(PodWithProjection(json::object())), "runner");
  EXPECT_EQ(ServiceAccountOf(json{{"spec", json::object()}}), "default");
}

TEST(TokenSecret, RefreshedAtFourFifthsOfItsLifetime) {
  EXPECT_EQ(TokenRefreshAfter(1000, 2200), 1960);
  EXPECT_EQ(TokenRefreshAfter(0, 600), 480);
}

TEST(TokenSecret, ItsBookkeepingNamesThePodAndNothingOfThePodsOwnMetadata) {
  VirtualClusterView view;
  view.tenant = "acme";
  view.vcluster = "dev";
  view.host_namespace = "septa-acme-dev";
  json pod = PodWithProjection(json::object());
  pod["metadata"]["labels"] = {{"app", "web"}};
  json secret = {{"metadata", TokenSecretMetadata(view, pod, 1960)}};
  EXPECT_EQ(secret["metadata"]["name"], "septa-sa-token-uid-web");
  EXPECT_FALSE(secret["metadata"]["labels"].contains("app"));
  auto ref = VirtualRefOf(secret, "acme", "dev");
  ASSERT_TRUE(ref.has_value());
  EXPECT_EQ(*ref, (VirtualRef{"team", "web", "uid-web"}));
  EXPECT_EQ(MetadataMapString(secret, "annotations", kVirtualKindAnnotation), kTokenSecretKind);
  EXPECT_EQ(RecordedTokenRefresh(secret), 1960);
  EXPECT_FALSE(VirtualRefOf(secret, "acme", "other").has_value());

  for (const char* bad : {"", "soon", "12x", "-"}) {
    secret["metadata"]["annotations"][std::string(kTokenRefreshAnnotation)] = bad;
    EXPECT_FALSE(RecordedTokenRefresh(secret).has_value()) << bad;
  }
}

}  // namespace
}  // namespace septa::tenancy::sync
