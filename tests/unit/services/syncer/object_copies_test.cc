// The config maps and secrets synced pods use, copied to the host
// (services/syncer/object_copier.h) end to end in one process: the host
// kubesim, the simulated virtual control plane, real kube clients.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tenancy/sync/bookkeeping.h"
#include "tests/unit/services/syncer/syncer_fixture.h"

namespace septa::syncer::testing {
namespace {

class SyncerObjectCopiesTest : public SyncerFixture {
 protected:
  static json ConfigMap(const std::string& name, json data) {
    return {{"apiVersion", "v1"},
            {"kind", "ConfigMap"},
            {"metadata", {{"name", name}, {"namespace", "default"}, {"labels", {{"app", "web"}}}}},
            {"data", std::move(data)}};
  }
  static json Secret(const std::string& name, const std::string& type, json data) {
    return {{"apiVersion", "v1"},
            {"kind", "Secret"},
            {"metadata", {{"name", name}, {"namespace", "default"}}},
            {"type", type},
            {"data", std::move(data)}};
  }
  // A pod that mounts config map `config`, takes its environment from secret
  // "creds" and pulls with secret "registry".
  static json PodUsing(const std::string& name, const std::string& config) {
    json pod = Pod(name);
    pod["spec"]["volumes"] = json::array({{{"name", "config"}, {"configMap", {{"name", config}}}}});
    json& main = pod["spec"]["containers"][0];
    main["volumeMounts"] = json::array({{{"name", "config"}, {"mountPath", "/etc/app"}}});
    main["envFrom"] = json::array({{{"secretRef", {{"name", "creds"}}}}});
    pod["spec"]["imagePullSecrets"] = json::array({{{"name", "registry"}}});
    return pod;
  }
  void CreateObjects() {
    ASSERT_TRUE(virtual_->Create(kube::kConfigMaps, "default", ConfigMap("app-config", {{"mode", "fast"}})).ok());
    ASSERT_TRUE(virtual_->Create(kube::kConfigMaps, "default", ConfigMap("unused", {{"x", "y"}})).ok());
    ASSERT_TRUE(
        virtual_->Create(kube::kSecrets, "default", Secret("creds", "Opaque", {{"PASSWORD", "aHVudGVyMg=="}})).ok());
    ASSERT_TRUE(virtual_
                    ->Create(kube::kSecrets, "default",
                             Secret("registry", "kubernetes.io/dockerconfigjson", {{".dockerconfigjson", "e30="}}))
                    .ok());
  }
  void RunPod(const std::string& name, const std::string& config = "app-config") {
    ASSERT_TRUE(virtual_->Create(kube::kPods, "default", PodUsing(name, config)).ok());
    ASSERT_TRUE(Eventually([&] {
      auto pod = VirtualPod(name);
      return pod && (*pod)["status"].value("phase", "") == "Running";
    })) << name
        << " did not run";
  }
  std::optional<json> HostCopy(const kube::Resource& resource, const std::string& name) {
    auto got = host_->Get(resource, HostNamespace(), HostName(name));
    return got.ok() ? std::optional<json>(*got) : std::nullopt;
  }
  std::optional<json> VirtualObject(const kube::Resource& resource, const std::string& name) {
    auto got = virtual_->Get(resource, "default", name);
    return got.ok() ? std::optional<json>(*got) : std::nullopt;
  }
  std::string VersionOf(const kube::Resource& resource, const std::string& name) {
    auto copy = HostCopy(resource, name);
    return copy ? (*copy)["metadata"].value("resourceVersion", "") : "";
  }
};

TEST_F(SyncerObjectCopiesTest, TheConfigMapsAndSecretsAPodUsesAreOnTheHostWithItsReferencesNames) {
  ASSERT_NO_FATAL_FAILURE(CreateObjects());
  ASSERT_NO_FATAL_FAILURE(RunPod("web"));
  auto host_pod = HostPod("web");
  ASSERT_TRUE(host_pod.has_value());
  // The renamed references name the copies.
  EXPECT_EQ((*host_pod)["spec"]["volumes"][0]["configMap"].value("name", ""), HostName("app-config"));
  EXPECT_EQ((*host_pod)["spec"]["containers"][0]["envFrom"][0]["secretRef"].value("name", ""), HostName("creds"));
  EXPECT_EQ((*host_pod)["spec"]["imagePullSecrets"][0].value("name", ""), HostName("registry"));

  auto config = HostCopy(kube::kConfigMaps, "app-config");
  ASSERT_TRUE(config.has_value()) << "the copy exists once the pod runs";
  EXPECT_EQ((*config)["data"], json::object({{"mode", "fast"}}));
  EXPECT_EQ((*config)["metadata"]["labels"].value("app", ""), "web");
  EXPECT_EQ((*config)["metadata"]["labels"].value(std::string(tenancy::sync::kSyncedLabel), ""), "true");
  EXPECT_EQ(
      tenancy::sync::VirtualRefOf(*config, kTenant, kVcluster),
      (tenancy::sync::VirtualRef{"default", "app-config",
                                 (*VirtualObject(kube::kConfigMaps, "app-config"))["metadata"].value("uid", "")}));
  auto creds = HostCopy(kube::kSecrets, "creds");
  ASSERT_TRUE(creds.has_value());
  EXPECT_EQ((*creds)["data"], json::object({{"PASSWORD", "aHVudGVyMg=="}}));
  EXPECT_EQ((*creds).value("type", ""), "Opaque");
  auto registry = HostCopy(kube::kSecrets, "registry");
  ASSERT_TRUE(registry.has_value());
  EXPECT_EQ((*registry).value("type", ""), "kubernetes.io/dockerconfigjson");

  ASSERT_TRUE(syncer_->AwaitIdle(10s));
  EXPECT_FALSE(HostCopy(kube::kConfigMaps, "unused").has_value()) << "no pod uses it";
}

// Each of those watches costs about 400 KiB: a virtual cluster whose pods
// use none keeps neither.
TEST_F(SyncerObjectCopiesTest, ConfigMapsAndSecretsAreWatchedOnlyOnceAPodUsesOne) {
  ASSERT_NO_FATAL_FAILURE(CreateObjects());
  RunningPod("plain");
  auto cluster = syncer_->watches().Find({kTenant, kVcluster});
  ASSERT_NE(cluster, nullptr);
  EXPECT_FALSE(cluster->WatchesObjects(kube::kConfigMaps));
  EXPECT_FALSE(cluster->WatchesObjects(kube::kSecrets));
  EXPECT_FALSE(HostCopy(kube::kConfigMaps, "unused").has_value());

  ASSERT_NO_FATAL_FAILURE(RunPod("web"));
  EXPECT_TRUE(cluster->WatchesObjects(kube::kConfigMaps));
  EXPECT_TRUE(cluster->WatchesObjects(kube::kSecrets));
  EXPECT_TRUE(HostCopy(kube::kConfigMaps, "app-config").has_value());
  EXPECT_TRUE(HostCopy(kube::kSecrets, "creds").has_value());
  EXPECT_FALSE(HostCopy(kube::kConfigMaps, "unused").has_value());
}

TEST_F(SyncerObjectCopiesTest, AChangeOfTheVirtualConfigMapReachesTheHost) {
  ASSERT_NO_FATAL_FAILURE(CreateObjects());
  ASSERT_NO_FATAL_FAILURE(RunPod("web"));
  ASSERT_TRUE(virtual_
                  ->Patch(kube::kConfigMaps, "default", "app-config", kube::PatchType::kMerge,
                          R"({"data":{"mode":"safe"},"metadata":{"labels":{"app":null,"rev":"2"}}})")
                  .ok());
  EXPECT_TRUE(Eventually([&] {
    auto copy = HostCopy(kube::kConfigMaps, "app-config");
    return copy && (*copy)["data"] == json::object({{"mode", "safe"}}) &&
           (*copy)["metadata"]["labels"].value("rev", "") == "2" && !(*copy)["metadata"]["labels"].contains("app");
  }));
}

// As a kubelet waits for a config map that does not exist yet, the pod is
// synced and the copy follows when the config map appears.
TEST_F(SyncerObjectCopiesTest, AConfigMapCreatedAfterThePodThatUsesItIsCopiedWhenItAppears) {
  ASSERT_NO_FATAL_FAILURE(CreateObjects());
  ASSERT_NO_FATAL_FAILURE(RunPod("web", "late-config"));
  ASSERT_TRUE(syncer_->AwaitIdle(10s));
  EXPECT_FALSE(HostCopy(kube::kConfigMaps, "late-config").has_value());
  ASSERT_TRUE(virtual_->Create(kube::kConfigMaps, "default", ConfigMap("late-config", {{"k", "v"}})).ok());
  EXPECT_TRUE(Eventually([&] { return HostCopy(kube::kConfigMaps, "late-config").has_value(); }));
}

TEST_F(SyncerObjectCopiesTest, ACopyGoesWithTheLastPodThatUsesItOrWithTheVirtualObject) {
  ASSERT_NO_FATAL_FAILURE(CreateObjects());
  ASSERT_TRUE(virtual_->Create(kube::kConfigMaps, "default", ConfigMap("other-config", {{"k", "v"}})).ok());
  ASSERT_NO_FATAL_FAILURE(RunPod("web"));
  ASSERT_NO_FATAL_FAILURE(RunPod("api", "other-config"));
  ASSERT_TRUE(HostCopy(kube::kConfigMaps, "other-config").has_value());

  // "creds" and "registry" are still used by "api".
  ASSERT_TRUE(virtual_->Delete(kube::kPods, "default", "web").ok());
  EXPECT_TRUE(Eventually([&] { return !HostPod("web") && !HostCopy(kube::kConfigMaps, "app-config"); }));
  ASSERT_TRUE(syncer_->AwaitIdle(10s));
  EXPECT_TRUE(HostCopy(kube::kSecrets, "creds").has_value());
  EXPECT_TRUE(HostCopy(kube::kSecrets, "registry").has_value());

  // A used object deleted in the virtual cluster goes from the host too.
  ASSERT_TRUE(virtual_->Delete(kube::kConfigMaps, "default", "other-config").ok());
  EXPECT_TRUE(Eventually([&] { return !HostCopy(kube::kConfigMaps, "other-config"); }));

  ASSERT_TRUE(virtual_->Delete(kube::kPods, "default", "api").ok());
  EXPECT_TRUE(Eventually([&] { return !HostCopy(kube::kSecrets, "creds") && !HostCopy(kube::kSecrets, "registry"); }));
}

TEST_F(SyncerObjectCopiesTest, AStaleCopyOfAnEarlierObjectOfThatNameIsReplaced) {
  ASSERT_NO_FATAL_FAILURE(CreateObjects());
  ASSERT_NO_FATAL_FAILURE(RunPod("web"));
  const std::string first_uid = (*HostCopy(kube::kConfigMaps, "app-config"))["metadata"].value("uid", "");
  // Deleted and created again while the pod still uses it: a new UID.
  ASSERT_TRUE(virtual_->Delete(kube::kConfigMaps, "default", "app-config").ok());
  ASSERT_TRUE(virtual_->Create(kube::kConfigMaps, "default", ConfigMap("app-config", {{"mode", "new"}})).ok());
  const std::string virtual_uid = (*VirtualObject(kube::kConfigMaps, "app-config"))["metadata"].value("uid", "");
  EXPECT_TRUE(Eventually([&] {
    auto copy = HostCopy(kube::kConfigMaps, "app-config");
    auto ref = copy ? tenancy::sync::VirtualRefOf(*copy, kTenant, kVcluster) : std::nullopt;
    return ref && ref->uid == virtual_uid && (*copy)["data"] == json::object({{"mode", "new"}});
  }));
  EXPECT_NE((*HostCopy(kube::kConfigMaps, "app-config"))["metadata"].value("uid", ""), first_uid);
}

TEST_F(SyncerObjectCopiesTest, ARestartedSyncerWritesNoCopyAgain) {
  ASSERT_NO_FATAL_FAILURE(CreateObjects());
  ASSERT_NO_FATAL_FAILURE(RunPod("web"));
  ASSERT_TRUE(syncer_->AwaitIdle(10s));
  const std::string config = VersionOf(kube::kConfigMaps, "app-config");
  const std::string creds = VersionOf(kube::kSecrets, "creds");
  const std::string registry = VersionOf(kube::kSecrets, "registry");
  ASSERT_FALSE(config.empty());
  syncer_.reset();
  StartSyncer();
  ASSERT_TRUE(Eventually([&] { return !syncer_->watches().Watched().empty(); }));
  ASSERT_TRUE(syncer_->AwaitIdle(10s));
  EXPECT_EQ(VersionOf(kube::kConfigMaps, "app-config"), config);
  EXPECT_EQ(VersionOf(kube::kSecrets, "creds"), creds);
  EXPECT_EQ(VersionOf(kube::kSecrets, "registry"), registry);
  EXPECT_FALSE(HostCopy(kube::kConfigMaps, "unused").has_value());
}

// L6: a copy the host refuses for what it is (a 400, 413 or 422) is not
// retried forever with the pod left Pending in silence: the virtual object
// gets a SyncRefused event and the pod that needs it is refused, both
// saying why. Here the host's 256 KiB bound on annotations: the virtual
// config map is at it, its copy's bookkeeping annotations take it past.
TEST_F(SyncerObjectCopiesTest, ACopyTheHostRefusesIsASyncRefusedEventNotARetryForever) {
  json config = ConfigMap("app-config", {{"mode", "fast"}});
  config["metadata"]["annotations"] = {{"note", std::string(256 * 1024 - 4, 'x')}};
  ASSERT_TRUE(virtual_->Create(kube::kConfigMaps, "default", config).ok());
  ASSERT_TRUE(
      virtual_->Create(kube::kSecrets, "default", Secret("creds", "Opaque", {{"PASSWORD", "aHVudGVyMg=="}})).ok());
  ASSERT_TRUE(virtual_
                  ->Create(kube::kSecrets, "default",
                           Secret("registry", "kubernetes.io/dockerconfigjson", {{".dockerconfigjson", "e30="}}))
                  .ok());
  ASSERT_TRUE(virtual_->Create(kube::kPods, "default", PodUsing("web", "app-config")).ok());
  const auto refusal = [&](const std::string& kind, const std::string& name) -> std::optional<std::string> {
    auto events = virtual_->List(kube::kEvents, "default");
    if (!events.ok()) return std::nullopt;
    for (const auto& item : events->items) {
      const json event = item.ToJson();
      if (event.value("reason", "") == "SyncRefused" && event["involvedObject"].value("kind", "") == kind &&
          event["involvedObject"].value("name", "") == name) {
        return event.value("message", "");
      }
    }
    return std::nullopt;
  };
  ASSERT_TRUE(Eventually([&] { return refusal("ConfigMap", "app-config") && refusal("Pod", "web"); }));
  EXPECT_NE(refusal("ConfigMap", "app-config")->find("metadata.annotations: Too long: must have at most 262144 bytes"),
            std::string::npos)
      << *refusal("ConfigMap", "app-config");
  EXPECT_NE(refusal("Pod", "web")->find("ConfigMap default/app-config"), std::string::npos) << *refusal("Pod", "web");
  ASSERT_TRUE(syncer_->AwaitIdle(10s));  // nothing left retrying
  EXPECT_FALSE(HostPod("web").has_value());
  EXPECT_FALSE(HostCopy(kube::kConfigMaps, "app-config").has_value());
  EXPECT_EQ((*VirtualPod("web"))["status"].value("phase", ""), "Pending");
}

}  // namespace
}  // namespace septa::syncer::testing
