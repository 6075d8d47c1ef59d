// Service account tokens through kubesim's HTTPS API: minted by TokenRequest
// with kube-apiserver's validation, and accepted as bearer tokens only while
// unexpired, for the API server's audience, and while the service account
// and the pod they are bound to are the ones they were minted for.
#include "services/kubesim/service_account_tokens.h"

#include <gtest/gtest.h>

#include "services/kube/client.h"
#include "services/kube/resources.h"
#include "services/kubesim/kubesim.h"
#include "tests/support/fake_clock.h"

namespace septa::kubesim {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

json BusyboxPod(const std::string& name) {
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata", {{"name", name}}},
          {"spec", {{"containers", {{{"name", "c"}, {"image", "busybox"}}}}}}};
}

json BoundTo(const json& pod, std::optional<std::int64_t> seconds, json audiences = json::array()) {
  json spec = {
      {"audiences", std::move(audiences)},
      {"boundObjectRef",
       {{"kind", "Pod"}, {"apiVersion", "v1"}, {"name", pod["metadata"]["name"]}, {"uid", pod["metadata"]["uid"]}}}};
  if (seconds) spec["expirationSeconds"] = *seconds;
  return {{"apiVersion", "authentication.k8s.io/v1"}, {"kind", "TokenRequest"}, {"spec", std::move(spec)}};
}

class kubesimServiceAccountTokens : public ::testing::Test {
 protected:
  void SetUp() override {
    KubeSimOptions options;
    options.clock = &clock_;
    sim_ = std::make_unique<KubeSim>(options);
    ASSERT_TRUE(sim_->Start().ok());
    config_ = *kube::ParseKubeconfig(*sim_->AdminKubeconfig());
    admin_ = std::move(*kube::Client::Create(config_));
    ASSERT_TRUE(admin_->Create(kube::kNamespaces, "", {{"metadata", {{"name", "team"}}}}).ok());
    auto pod = admin_->Create(kube::kPods, "team", BusyboxPod("web"));
    ASSERT_TRUE(pod.ok()) << pod.status().ToString();
    pod_ = *pod;
  }

  Result<json> RequestToken(const json& request, const std::string& account = "default") {
    return admin_->CreateSubresource(kube::kServiceAccounts, "team", account, "token", request);
  }

  // A client that presents `token` and no client certificate.
  std::unique_ptr<kube::Client> WithToken(const std::string& token) {
    kube::ClientConfig config = config_;
    config.client_certificate_pem.clear();
    config.client_key_pem.clear();
    config.token = token;
    kube::ClientOptions options;
    options.max_retries = 0;
    return std::move(*kube::Client::Create(config, options));
  }

  // What the API server answers the token's holder: 401 when the token does
  // not authenticate; 403 naming the user when it does (the default service
  // account may not list pods).
  Status ListPodsWith(const std::string& token) { return WithToken(token)->List(kube::kPods, "team").status(); }

  FakeClock clock_;
  std::unique_ptr<KubeSim> sim_;
  kube::ClientConfig config_;
  std::unique_ptr<kube::Client> admin_;
  json pod_;
};

TEST_F(kubesimServiceAccountTokens, ABoundTokenAuthenticatesAsItsServiceAccountUntilItExpires) {
  auto minted = RequestToken(BoundTo(pod_, 1200));
  ASSERT_TRUE(minted.ok()) << minted.status().ToString();
  EXPECT_EQ((*minted)["kind"], "TokenRequest");
  EXPECT_EQ((*minted)["spec"]["expirationSeconds"], 1200);
  EXPECT_EQ((*minted)["spec"]["audiences"], json::array({"https://kubernetes.default.svc"}));
  EXPECT_EQ((*minted)["spec"]["boundObjectRef"]["uid"], pod_["metadata"]["uid"]);
  const auto expires = ParseRfc3339((*minted)["status"]["expirationTimestamp"].get<std::string>());
  ASSERT_TRUE(expires.has_value());
  EXPECT_EQ(*expires, std::chrono::time_point_cast<std::chrono::seconds>(clock_.Now()) + 1200s);
  const std::string token = (*minted)["status"]["token"];

  Status listed = ListPodsWith(token);
  EXPECT_EQ(listed.code(), Code::kPermissionDenied) << listed.ToString();
  EXPECT_NE(listed.message().find("system:serviceaccount:team:default"), std::string::npos) << listed.ToString();

  clock_.Advance(1199s);
  EXPECT_EQ(ListPodsWith(token).code(), Code::kPermissionDenied);
  clock_.Advance(1s);
  EXPECT_EQ(ListPodsWith(token).code(), Code::kUnauthenticated);
}

TEST_F(kubesimServiceAccountTokens, ABoundTokenDiesWithItsPodEvenWhenAPodOfThatNameComesBack) {
  auto minted = RequestToken(BoundTo(pod_, std::nullopt));
  ASSERT_TRUE(minted.ok()) << minted.status().ToString();
  EXPECT_EQ((*minted)["spec"]["expirationSeconds"], 3600);  // Kubernetes' default
  const std::string token = (*minted)["status"]["token"];
  kube::DeleteOptions now;
  now.grace_period_seconds = 0;
  ASSERT_TRUE(admin_->Delete(kube::kPods, "team", "web", now).ok());
  EXPECT_EQ(ListPodsWith(token).code(), Code::kUnauthenticated);
  ASSERT_TRUE(admin_->Create(kube::kPods, "team", BusyboxPod("web")).ok());
  EXPECT_EQ(ListPodsWith(token).code(), Code::kUnauthenticated);
}

TEST_F(kubesimServiceAccountTokens, ATokenForAnotherAudienceOrTamperedWithOrFromAnotherServerIsRefused) {
  auto vault = RequestToken(BoundTo(pod_, 600, {"vault"}));
  ASSERT_TRUE(vault.ok()) << vault.status().ToString();
  EXPECT_EQ(ListPodsWith((*vault)["status"]["token"]).code(), Code::kUnauthenticated);

  auto minted = RequestToken(BoundTo(pod_, 600));
  ASSERT_TRUE(minted.ok());
  std::string token = (*minted)["status"]["token"];
  std::string tampered = token;
  tampered[tampered.find('.') + 5] ^= 1;
  EXPECT_EQ(ListPodsWith(tampered).code(), Code::kUnauthenticated);

  // Signed with a key of another server: what VirtualControlPlane relies on.
  auto claims = VerifiedServiceAccountClaims(token, "not this server's key");
  EXPECT_FALSE(claims.has_value());
  ServiceAccountClaims forged;
  forged.ns = "team";
  forged.service_account = "default";
  forged.id = "x";
  forged.audiences = {std::string(kApiAudience)};
  forged.issued_at = std::chrono::duration_cast<std::chrono::seconds>(clock_.Now().time_since_epoch()).count();
  forged.expires_at = forged.issued_at + 3600;
  EXPECT_EQ(ListPodsWith(SignServiceAccountToken(forged, "another key")).code(), Code::kUnauthenticated);
}

TEST_F(kubesimServiceAccountTokens, ABadRequestIsRefusedNamingTheField) {
  auto too_short = RequestToken(BoundTo(pod_, 599));
  EXPECT_EQ(too_short.status().code(), Code::kInvalidArgument);
  EXPECT_NE(
      too_short.status().message().find("spec.expirationSeconds: may not specify a duration less than 10 minutes"),
      std::string::npos)
      << too_short.status().ToString();

  json secret_bound = BoundTo(pod_, 600);
  secret_bound["spec"]["boundObjectRef"]["kind"] = "Secret";
  auto kind = RequestToken(secret_bound);
  EXPECT_EQ(kind.status().code(), Code::kInvalidArgument);
  EXPECT_NE(kind.status().message().find("spec.boundObjectRef.kind"), std::string::npos) << kind.status().ToString();

  EXPECT_EQ(RequestToken(BoundTo(pod_, 600), "nobody").status().code(), Code::kNotFound);
  json gone = pod_;
  gone["metadata"]["name"] = "gone";
  EXPECT_EQ(RequestToken(BoundTo(gone, 600)).status().code(), Code::kNotFound);
  json recreated = pod_;
  recreated["metadata"]["uid"] = "an-earlier-uid";
  auto conflict = RequestToken(BoundTo(recreated, 600));
  EXPECT_EQ(conflict.status().code(), Code::kAborted) << conflict.status().ToString();
  EXPECT_NE(conflict.status().message().find("does not match the UID in record"), std::string::npos);
}

// What Vault's Kubernetes auth asks the API server about a workload's JWT.
TEST_F(kubesimServiceAccountTokens, ATokenReviewSaysWhoATokenIsForTheAudiencesAsked) {
  auto review = [&](const std::string& token, json audiences = nullptr) {
    json spec = {{"token", token}};
    if (!audiences.is_null()) spec["audiences"] = std::move(audiences);
    return admin_->Create(kube::kTokenReviews, "",
                          {{"apiVersion", "authentication.k8s.io/v1"}, {"kind", "TokenReview"}, {"spec", spec}});
  };
  auto vault = RequestToken(BoundTo(pod_, 600, {"vault"}));
  ASSERT_TRUE(vault.ok()) << vault.status().ToString();
  const std::string vault_token = (*vault)["status"]["token"];

  auto good = review(vault_token, {"vault"});
  ASSERT_TRUE(good.ok()) << good.status().ToString();
  const json& status = (*good)["status"];
  EXPECT_EQ(status["authenticated"], true) << good->dump();
  EXPECT_EQ(status["user"]["username"], "system:serviceaccount:team:default");
  EXPECT_FALSE(status["user"]["uid"].get<std::string>().empty());
  EXPECT_EQ(status["user"]["groups"],
            json::array({"system:serviceaccounts", "system:serviceaccounts:team", "system:authenticated"}));
  EXPECT_EQ(status["user"]["extra"]["authentication.kubernetes.io/pod-name"], json::array({"web"}));
  EXPECT_EQ(status["user"]["extra"]["authentication.kubernetes.io/pod-uid"], json::array({pod_["metadata"]["uid"]}));
  EXPECT_EQ(status["audiences"], json::array({"vault"}));

  // Not for the API server's own audience, nor for one it was not minted for.
  for (const json& audiences : {json(nullptr), json::array({"other"})}) {
    auto refused = review(vault_token, audiences);
    ASSERT_TRUE(refused.ok()) << refused.status().ToString();
    EXPECT_NE((*refused)["status"].value("authenticated", false), true) << refused->dump();
    EXPECT_EQ((*refused)["status"]["error"], "invalid bearer token");
  }
  auto garbage = review("not-a-token");
  ASSERT_TRUE(garbage.ok());
  EXPECT_NE((*garbage)["status"].value("authenticated", false), true);

  // It dies with its pod, as a bearer token does.
  kube::DeleteOptions now;
  now.grace_period_seconds = 0;
  ASSERT_TRUE(admin_->Delete(kube::kPods, "team", "web", now).ok());
  EXPECT_NE((*review(vault_token, {"vault"}))["status"].value("authenticated", false), true);

  auto empty = review("");
  EXPECT_EQ(empty.status().code(), Code::kInvalidArgument);
  EXPECT_NE(empty.status().message().find("spec.token"), std::string::npos) << empty.status().ToString();
  EXPECT_FALSE(admin_->List(kube::kTokenReviews, "").ok()) << "created and answered, never stored";
}

// A reviewer needs system:auth-delegator (Vault's reviewer is bound to it).
TEST_F(kubesimServiceAccountTokens, OnlyAnAuthDelegatorMayReviewTokens) {
  auto minted = RequestToken(BoundTo(pod_, 600));
  ASSERT_TRUE(minted.ok());
  const std::string token = (*minted)["status"]["token"];
  const json body = {{"apiVersion", "authentication.k8s.io/v1"}, {"kind", "TokenReview"}, {"spec", {{"token", token}}}};
  auto refused = WithToken(token)->Create(kube::kTokenReviews, "", body);
  EXPECT_EQ(refused.status().code(), Code::kPermissionDenied) << refused.status().ToString();

  const kube::Resource cluster_role_bindings{"rbac.authorization.k8s.io", "v1", "clusterrolebindings", false};
  ASSERT_TRUE(admin_
                  ->Create(cluster_role_bindings, "",
                           {{"apiVersion", "rbac.authorization.k8s.io/v1"},
                            {"kind", "ClusterRoleBinding"},
                            {"metadata", {{"name", "reviewer"}}},
                            {"roleRef",
                             {{"apiGroup", "rbac.authorization.k8s.io"},
                              {"kind", "ClusterRole"},
                              {"name", "system:auth-delegator"}}},
                            {"subjects", {{{"kind", "ServiceAccount"}, {"name", "default"}, {"namespace", "team"}}}}})
                  .ok());
  auto allowed = WithToken(token)->Create(kube::kTokenReviews, "", body);
  ASSERT_TRUE(allowed.ok()) << allowed.status().ToString();
  EXPECT_EQ((*allowed)["status"]["authenticated"], true);
}

TEST(kubesimServiceAccountTokenFormat, SignedClaimsReadBackAndNothingElseDoes) {
  ServiceAccountClaims claims;
  claims.ns = "team";
  claims.service_account = "runner";
  claims.service_account_uid = "sa-uid";
  claims.pod = "web";
  claims.pod_uid = "pod-uid";
  claims.id = "jti";
  claims.audiences = {"a", "b"};
  claims.issued_at = 100;
  claims.expires_at = 700;
  const std::string token = SignServiceAccountToken(claims, "key");
  auto read = VerifiedServiceAccountClaims(token, "key");
  ASSERT_TRUE(read.has_value());
  EXPECT_EQ(read->ns, "team");
  EXPECT_EQ(read->service_account, "runner");
  EXPECT_EQ(read->service_account_uid, "sa-uid");
  EXPECT_EQ(read->pod, "web");
  EXPECT_EQ(read->pod_uid, "pod-uid");
  EXPECT_EQ(read->audiences, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(read->expires_at, 700);
  EXPECT_FALSE(VerifiedServiceAccountClaims(token, "").has_value());
  EXPECT_FALSE(VerifiedServiceAccountClaims(token, "other").has_value());
  EXPECT_FALSE(VerifiedServiceAccountClaims("a.b", "key").has_value());
  EXPECT_FALSE(VerifiedServiceAccountClaims("", "key").has_value());
  EXPECT_FALSE(VerifiedServiceAccountClaims(token + "x", "key").has_value());
}

}  // namespace
}  // namespace septa::kubesim
