// The tenant's service account token end to end in one process: minted by
// the virtual cluster's API for the virtual pod, written to the host Secret
// the host pod mounts, minted again at 80 % of its lifetime on the syncer's
// clock, and deleted with the pod.
#include "services/syncer/token_secrets.h"

#include <gtest/gtest.h>

#include "services/base/base64.h"
#include "tenancy/sync/pod_translation.h"
#include "tenancy/sync/token_secret.h"
#include "tests/support/fake_clock.h"
#include "tests/unit/services/syncer/syncer_fixture.h"

namespace septa::syncer::testing {
namespace {

class TokenSecretsTest : public SyncerFixture {
 protected:
  // The syncer's, when a test gives it one: outlives the syncer (TearDown stops it).
  FakeClock syncer_clock_{SystemClock().Now()};

  std::optional<json> TokenSecret(const std::string& uid) {
    auto got = host_->Get(kube::kSecrets, HostNamespace(), tenancy::sync::TokenSecretName(uid));
    return got.ok() ? std::optional<json>(*std::move(got)) : std::nullopt;
  }
  static std::string Data(const json& secret, const std::string& key) {
    return base::Base64Decode(secret["data"].value(key, "")).value_or("");
  }
  // The token's claims (its middle part), as anyone holding it can read them.
  static json Claims(const std::string& token) {
    const std::size_t first = token.find('.'), last = token.rfind('.');
    return json::parse(base::Base64UrlDecode(token.substr(first + 1, last - first - 1)).value_or("{}"));
  }
  // What the virtual API server answers the token's holder.
  Status ListPodsWith(const std::string& token) {
    kube::ClientConfig config = *kube::ParseKubeconfig(*planes_->AdminKubeconfig(kTenant, kVcluster));
    config.token = token;
    kube::ClientOptions options;
    options.max_retries = 0;
    return (*kube::Client::Create(config, options))->List(kube::kPods, "default").status();
  }
};

TEST_F(TokenSecretsTest, AVirtualPodsTokenIsMintedForItMountedOnTheHostRefreshedInTimeAndDeletedWithIt) {
  syncer_.reset();
  StartSyncer(&syncer_clock_);
  json pod = Pod("web");
  pod["spec"]["volumes"] = json::array(
      {{{"name", "token"},
        {"projected",
         {{"sources", json::array({{{"serviceAccountToken", {{"expirationSeconds", 1200}, {"path", "token"}}}}})}}}}});
  ASSERT_TRUE(virtual_->Create(kube::kPods, "default", pod).ok());
  std::optional<json> host_pod;
  ASSERT_TRUE(Eventually([&] { return (host_pod = HostPod("web")).has_value(); }));
  const std::string uid = (*VirtualPod("web"))["metadata"]["uid"];
  const std::string secret_name = tenancy::sync::TokenSecretName(uid);
  EXPECT_NE(host_pod->dump().find("\"" + secret_name + "\""), std::string::npos) << "the host pod mounts it";

  const std::optional<json> secret = TokenSecret(uid);
  ASSERT_TRUE(secret.has_value()) << "written before the host pod that mounts it";
  const std::string token = Data(*secret, "token");
  EXPECT_EQ(Data(*secret, "namespace"), "default");
  EXPECT_EQ(Data(*secret, "ca.crt"), planes_->listener_ca_certificate());
  const json claims = Claims(token);
  EXPECT_EQ(claims["exp"].get<std::int64_t>() - claims["iat"].get<std::int64_t>(), 1200)
      << "the requested lifetime, which vCluster ignores (10 years)";
  EXPECT_EQ(claims["kubernetes.io"]["pod"]["uid"], uid);
  Status listed = ListPodsWith(token);
  EXPECT_EQ(listed.code(), Code::kPermissionDenied) << listed.ToString();
  EXPECT_NE(listed.message().find("system:serviceaccount:default:default"), std::string::npos) << listed.ToString();

  // Due at 80 % of 1200 s on the syncer's clock: minted again, in place.
  // The virtual API server stamps `iat` in whole seconds on its own (real)
  // clock, a moment after the syncer's fake clock was set to the real time:
  // the two may be a second boundary apart.
  const auto refresh = tenancy::sync::RecordedTokenRefresh(*secret);
  ASSERT_TRUE(refresh.has_value());
  EXPECT_NEAR(*refresh - claims["iat"].get<std::int64_t>(), 960, 1);
  syncer_clock_.Advance(961s);
  std::string refreshed;
  EXPECT_TRUE(Eventually([&] {
    auto now = TokenSecret(uid);
    refreshed = now ? Data(*now, "token") : "";
    return !refreshed.empty() && refreshed != token;
  })) << "not minted again";
  EXPECT_EQ(ListPodsWith(refreshed).code(), Code::kPermissionDenied);

  ASSERT_TRUE(virtual_->Delete(kube::kPods, "default", "web").ok());
  EXPECT_TRUE(Eventually([&] { return !HostPod("web") && !TokenSecret(uid); })) << "the token secret outlived its pod";
  EXPECT_EQ(ListPodsWith(refreshed).code(), Code::kUnauthenticated) << "a bound token dies with its pod";
}

TEST_F(TokenSecretsTest, APodThatOptsOutGetsNoTokenAndALeftoverTokenSecretIsCollected) {
  json pod = Pod("quiet");
  pod["spec"]["automountServiceAccountToken"] = false;
  ASSERT_TRUE(virtual_->Create(kube::kPods, "default", pod).ok());
  ASSERT_TRUE(Eventually([&] { return HostPod("quiet").has_value(); }));
  const std::string uid = (*VirtualPod("quiet"))["metadata"]["uid"];
  ASSERT_TRUE(syncer_->AwaitIdle(10s));
  EXPECT_FALSE(TokenSecret(uid).has_value());

  // A token secret of a pod that is gone (written before a crash, say) goes
  // at the virtual cluster's resync.
  json gone = Pod("gone");
  gone["metadata"]["uid"] = "00000000-0000-4000-8000-00000000dead";
  json leftover = {{"apiVersion", "v1"},
                   {"kind", "Secret"},
                   {"metadata", tenancy::sync::TokenSecretMetadata(View(), gone, 0)},
                   {"data", {{"token", base::Base64Encode("stale")}}}};
  ASSERT_TRUE(host_->Create(kube::kSecrets, HostNamespace(), leftover).ok());
  syncer_->VirtualClusterChanged(std::string(kTenant) + "/" + kVcluster);
  EXPECT_TRUE(Eventually([&] { return !TokenSecret("00000000-0000-4000-8000-00000000dead"); }));
}

}  // namespace
}  // namespace septa::syncer::testing
