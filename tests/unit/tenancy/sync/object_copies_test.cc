// The config maps and secrets synced pods use: which ones (the same walk as
// the renames), their host copies and when a copy is up to date.
#include <gtest/gtest.h>

#include <set>

#include "tenancy/sync/bookkeeping.h"
#include "tenancy/sync/object_copies.h"
#include "tenancy/sync/pod_references.h"
#include "tests/unit/tenancy/sync/sample_views.h"

namespace septa::tenancy::sync {
namespace {

using nlohmann::json;

ObjectRef ConfigMap(const std::string& name) { return {CopiedKind::kConfigMap, "team", name}; }
ObjectRef Secret(const std::string& name) { return {CopiedKind::kSecret, "team", name}; }

// A pod that names config maps and secrets at every place a pod can.
json PodUsingEverything() {
  json pod = SamplePod("web");
  json& spec = pod["spec"];
  spec["volumes"] = json::array({
      {{"name", "cfg"}, {"configMap", {{"name", "app-config"}}}},
      {{"name", "tls"}, {"secret", {{"secretName", "tls-cert"}}}},
      {{"name", "data"}, {"persistentVolumeClaim", {{"claimName", "data"}}}},
      {{"name", "bundle"},
       {"projected",
        {{"sources", json::array({{{"configMap", {{"name", "ca-bundle"}}}}, {{"secret", {{"name", "client"}}}}})}}}},
      {{"name", "store"}, {"csi", {{"driver", "x"}, {"nodePublishSecretRef", {{"name", "csi-creds"}}}}}},
      {{"name", "fs"}, {"cephfs", {{"monitors", json::array({"m"})}, {"secretRef", {{"name", "ceph-key"}}}}}},
  });
  json& main = spec["containers"][0];
  main["envFrom"] =
      json::array({{{"configMapRef", {{"name", "env-config"}}}}, {{"secretRef", {{"name", "env-secret"}}}}});
  main["env"] = json::array({{{"name", "A"}, {"valueFrom", {{"configMapKeyRef", {{"name", "one-key"}, {"key", "a"}}}}}},
                             {{"name", "B"}, {"valueFrom", {{"secretKeyRef", {{"name", "password"}, {"key", "b"}}}}}},
                             {{"name", "C"}, {"value", "plain"}}});
  spec["initContainers"] = json::array({{{"name", "init"},
                                         {"image", "busybox"},
                                         {"envFrom", json::array({{{"configMapRef", {{"name", "init-config"}}}}})}}});
  spec["imagePullSecrets"] = json::array({{{"name", "registry"}}});
  return pod;
}

TEST(SyncObjects, APodReferencesTheConfigMapsAndSecretsItNamesAndNoPvc) {
  const std::set<ObjectRef> want = {ConfigMap("app-config"), ConfigMap("ca-bundle"),   ConfigMap("env-config"),
                                    ConfigMap("one-key"),    ConfigMap("init-config"), Secret("tls-cert"),
                                    Secret("client"),        Secret("csi-creds"),      Secret("ceph-key"),
                                    Secret("env-secret"),    Secret("password"),       Secret("registry")};
  EXPECT_EQ(ReferencedObjects(PodUsingEverything()), want);
  EXPECT_TRUE(ReferencedObjects(SamplePod("bare")).empty());
  EXPECT_TRUE(ReferencedObjects(json::object()).empty());
}

// By construction: the renamed pod references exactly the host names of
// the objects the virtual pod references.
TEST(SyncObjects, EveryRenamedReferenceNamesTheHostCopyOfAReferencedObject) {
  const json pod = PodUsingEverything();
  std::set<ObjectRef> host_names;
  for (const ObjectRef& ref : ReferencedObjects(pod)) {
    host_names.insert({ref.kind, "team", HostObjectName(ref.name, "team", "train")});
  }
  json renamed = pod;
  RenameReferences(renamed["spec"], "web", "team", "train");
  EXPECT_EQ(ReferencedObjects(renamed), host_names);
}

// Older Kubernetes' ServiceAccount admission mounted the account's token
// secret: not copied (the syncer's token Secret is mounted in its place);
// a token secret a pod names itself is.
TEST(SyncObjects, TheAdmissionsTokenVolumeIsNotCopiedButANamedTokenSecretIs) {
  json pod = SamplePod("web");
  pod["spec"]["serviceAccountName"] = "builder";
  pod["spec"]["volumes"] =
      json::array({{{"name", "builder-token-x7k2p"}, {"secret", {{"secretName", "builder-token-x7k2p"}}}}});
  pod["spec"]["containers"][0]["volumeMounts"] = json::array(
      {{{"name", "builder-token-x7k2p"}, {"mountPath", std::string(kServiceAccountMountPath)}, {"readOnly", true}}});
  EXPECT_TRUE(ReferencedObjects(pod).empty());

  auto host = TranslatePodDown({}, SampleView(gpu::Tier::kShared), pod, {});
  ASSERT_TRUE(std::holds_alternative<HostPod>(host));
  const json& spec = std::get<HostPod>(host).object["spec"];
  ASSERT_EQ(spec["volumes"].size(), 1u);
  EXPECT_EQ(spec["volumes"][0]["secret"]["secretName"], TokenSecretName("uid-web"));

  pod["spec"]["containers"][0]["envFrom"] = json::array({{{"secretRef", {{"name", "builder-token-x7k2p"}}}}});
  EXPECT_EQ(ReferencedObjects(pod), std::set<ObjectRef>{Secret("builder-token-x7k2p")});

  // Mounted elsewhere, it is an ordinary secret volume.
  pod["spec"]["containers"][0].erase("envFrom");
  pod["spec"]["containers"][0]["volumeMounts"][0]["mountPath"] = "/etc/token";
  EXPECT_EQ(ReferencedObjects(pod), std::set<ObjectRef>{Secret("builder-token-x7k2p")});
}

json VirtualSecret() {
  return {
      {"apiVersion", "v1"},
      {"kind", "Secret"},
      {"metadata",
       {{"name", "password"},
        {"namespace", "team"},
        {"uid", "uid-password"},
        {"resourceVersion", "12"},
        {"labels", {{"app", "web"}}},
        {"annotations",
         {{"note", "rotated"}, {"kubectl.kubernetes.io/last-applied-configuration", R"({"data":{"b":"c2VjcmV0"}})"}}}}},
      {"type", "Opaque"},
      {"data", {{"b", "c2VjcmV0"}}},
      {"immutable", true}};
}

TEST(SyncObjects, AHostCopyCarriesTheNameBookkeepingAndContent) {
  const VirtualClusterView view = SampleView(gpu::Tier::kShared);
  auto copy = HostCopy(CopiedKind::kSecret, view, VirtualSecret());
  ASSERT_TRUE(copy.ok()) << copy.status().message();
  const json& meta = (*copy)["metadata"];
  EXPECT_EQ((*copy)["kind"], "Secret");
  EXPECT_EQ(meta["name"], "password-x-team-x-train");
  EXPECT_EQ(meta["namespace"], view.host_namespace);
  EXPECT_FALSE(meta.contains("resourceVersion"));
  EXPECT_FALSE(meta.contains("uid"));
  EXPECT_EQ(meta["labels"]["app"], "web");
  EXPECT_EQ(meta["labels"][std::string(kSyncedLabel)], "true");
  EXPECT_EQ(meta["annotations"]["note"], "rotated");
  EXPECT_FALSE(meta["annotations"].contains("kubectl.kubernetes.io/last-applied-configuration"));
  EXPECT_EQ(meta["annotations"][std::string(kVirtualKindAnnotation)], "Secret");
  EXPECT_EQ(meta["annotations"][std::string(kCopiedAnnotationsAnnotation)], "note");
  EXPECT_EQ((*copy)["type"], "Opaque");
  EXPECT_EQ((*copy)["data"], VirtualSecret()["data"]);
  EXPECT_EQ((*copy)["immutable"], true);
  EXPECT_FALSE(copy->contains("binaryData"));
  EXPECT_EQ(VirtualRefOf(*copy, "acme", "train"), (VirtualRef{"team", "password", "uid-password"}));

  json config_map = {{"metadata", {{"name", "app-config"}, {"namespace", "team"}, {"uid", "u"}}},
                     {"data", {{"k", "v"}}},
                     {"binaryData", {{"bin", "AAE="}}}};
  auto cm = HostCopy(CopiedKind::kConfigMap, view, config_map);
  ASSERT_TRUE(cm.ok());
  EXPECT_EQ((*cm)["kind"], "ConfigMap");
  EXPECT_EQ((*cm)["binaryData"], config_map["binaryData"]);
  EXPECT_FALSE(cm->contains("type"));

  config_map["metadata"].erase("uid");
  auto refused = HostCopy(CopiedKind::kConfigMap, view, config_map);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), Code::kInvalidArgument);
  EXPECT_NE(refused.status().message().find("metadata.uid"), std::string::npos);
}

TEST(SyncObjects, ACopyIsUpToDateUntilItsLabelsAnnotationsOrContentDiffer) {
  const json want = *HostCopy(CopiedKind::kSecret, SampleView(gpu::Tier::kShared), VirtualSecret());
  json stored = want;  // as the host API server returns it
  stored["metadata"]["uid"] = "host-uid";
  stored["metadata"]["resourceVersion"] = "40";
  stored["metadata"]["creationTimestamp"] = "2026-01-01T00:00:00Z";
  EXPECT_TRUE(CopyUpToDate(want, stored));

  json changed = stored;
  changed["data"]["b"] = "b3RoZXI=";
  EXPECT_FALSE(CopyUpToDate(want, changed));
  changed = stored;
  changed["metadata"]["labels"]["extra"] = "x";
  EXPECT_FALSE(CopyUpToDate(want, changed));
  changed = stored;
  changed["metadata"]["annotations"].erase("note");
  EXPECT_FALSE(CopyUpToDate(want, changed));
  changed = stored;
  changed.erase("immutable");
  EXPECT_FALSE(CopyUpToDate(want, changed));

  json empty_want = want, empty_stored = stored;
  empty_want.erase("data");
  empty_stored["data"] = json::object();
  EXPECT_TRUE(CopyUpToDate(empty_want, empty_stored)) << "an absent map and an empty one are equal";
}

}  // namespace
}  // namespace septa::tenancy::sync
