// StatusUp and HostPodPatch (SYNCER-FACTS "After creation").
#include <gtest/gtest.h>

#include "tests/unit/tenancy/sync/sample_views.h"

namespace septa::tenancy::sync {
namespace {

using nlohmann::json;

json HostOf(const json& virtual_pod) {
  return std::get<HostPod>(TranslatePodDown({}, SampleView(gpu::Tier::kShared), virtual_pod, {})).object;
}

TEST(SyncStatusUp, SidecarsHiddenAndQosKept) {
  json pod = SamplePod("web");
  pod["status"] = {{"qosClass", "Guaranteed"}};
  json host = HostOf(pod);
  host["status"] = json::parse(R"({"phase":"Running","qosClass":"BestEffort","podIP":"10.1.2.3",
    "containerStatuses":[{"name":"main","ready":true},{"name":"istio-proxy","ready":true}],
    "initContainerStatuses":[{"name":"istio-init"}]})");
  const json status = StatusUp(pod, host);
  EXPECT_EQ(status["phase"], "Running");
  EXPECT_EQ(status["podIP"], "10.1.2.3");
  EXPECT_EQ(status["qosClass"], "Guaranteed");
  EXPECT_EQ(status["containerStatuses"], json::parse(R"([{"name":"main","ready":true}])"));
  EXPECT_EQ(status["initContainerStatuses"], json::array());
}

TEST(SyncHostPatch, NothingWhenEqual) {
  json pod = SamplePod("web");
  pod["metadata"]["labels"] = {{"app", "web"}};
  EXPECT_EQ(HostPodPatch(pod, HostOf(pod), {}), std::nullopt);
}

TEST(SyncHostPatch, ImagesAndDeadline) {
  json pod = SamplePod("web");
  const json host = HostOf(pod);
  pod["spec"]["containers"][0]["image"] = "registry.example/train:2";
  pod["spec"]["activeDeadlineSeconds"] = 600;
  const auto patch = HostPodPatch(pod, host, {});
  ASSERT_TRUE(patch);
  EXPECT_EQ((*patch)["spec"]["containers"][0]["image"], "registry.example/train:2");
  EXPECT_EQ((*patch)["spec"]["containers"][0]["env"], host["spec"]["containers"][0]["env"]);  // the host's list
  EXPECT_EQ((*patch)["spec"]["activeDeadlineSeconds"], 600);
}

// Only Kubernetes' node-condition taints may be tolerated, after creation
// as at it: a toleration added later must not walk a pod onto a platform
// node (issue 28, H2).
TEST(SyncHostPatch, TolerationsUnionOfNodeConditionsOnly) {
  json pod = SamplePod("web");
  json host = HostOf(pod);
  host["spec"]["tolerations"] = json::parse(R"([{"key":"host-added","operator":"Exists"}])");
  pod["spec"]["tolerations"] = json::parse(R"([{"key":"dedicated","operator":"Equal","value":"gpu"},
    {"key":"septa.dev/x"},{"key":"node.kubernetes.io/unreachable","operator":"Exists","tolerationSeconds":30}])");
  const auto patch = HostPodPatch(pod, host, {});
  ASSERT_TRUE(patch);
  EXPECT_EQ((*patch)["spec"]["tolerations"], json::parse(R"([{"key":"host-added","operator":"Exists"},
    {"key":"node.kubernetes.io/unreachable","operator":"Exists","tolerationSeconds":30}])"));
}

// Issue 28, H3 and M5: keys that are the host's, added to a running pod,
// never reach its host pod (Septa's ownership label would make it survive
// sleep; an integration's annotation would make a host controller act).
TEST(SyncHostPatch, HostKeysAddedAfterCreationAreNotCopied) {
  json pod = SamplePod("web");
  json host = HostOf(pod);
  pod["metadata"]["labels"] = {{"app.kubernetes.io/managed-by", "septa"}, {"septa.dev/synced", "false"}};
  pod["metadata"]["annotations"] = {{"external-dns.alpha.kubernetes.io/hostname", "api.platform.example"},
                                    {"sidecar.istio.io/inject", "true"}};
  EXPECT_EQ(HostPodPatch(pod, host, {}), std::nullopt);
  // A tier allowed external-dns gets that annotation, and only that one.
  const auto patch = HostPodPatch(pod, host, {"external-dns.alpha.kubernetes.io"});
  ASSERT_TRUE(patch);
  EXPECT_EQ((*patch)["metadata"]["annotations"]["external-dns.alpha.kubernetes.io/hostname"], "api.platform.example");
  EXPECT_FALSE((*patch)["metadata"]["annotations"].contains("sidecar.istio.io/inject"));
  EXPECT_FALSE((*patch)["metadata"].contains("labels"));
}

TEST(SyncHostPatch, KueueGateSurvivesWhileTheTenantsGateGoes) {
  json pod = SamplePod("web");
  pod["spec"]["schedulingGates"] = json::parse(R"([{"name":"example.com/wait"}])");
  json host = HostOf(pod);
  EXPECT_EQ(host["metadata"]["annotations"]["septa.dev/copied-scheduling-gates"], "example.com/wait");
  host["spec"]["schedulingGates"].push_back({{"name", "kueue.x-k8s.io/admission"}});
  EXPECT_EQ(HostPodPatch(pod, host, {}), std::nullopt);  // the host's gate is no change to undo
  pod["spec"].erase("schedulingGates");
  const auto patch = HostPodPatch(pod, host, {});
  ASSERT_TRUE(patch);
  EXPECT_EQ((*patch)["spec"]["schedulingGates"], json::parse(R"([{"name":"kueue.x-k8s.io/admission"}])"));
  EXPECT_EQ((*patch)["metadata"]["annotations"]["septa.dev/copied-scheduling-gates"], nullptr);
}

TEST(SyncHostPatch, LabelsAndAnnotationsThreeWay) {
  json pod = SamplePod("web");
  pod["metadata"]["labels"] = {{"app", "web"}, {"stage", "dev"}};
  pod["metadata"]["annotations"] = {{"note", "a"}};
  json host = HostOf(pod);
  host["metadata"]["labels"]["host-added"] = "yes";
  host["metadata"]["annotations"]["kueue.x-k8s.io/workload"] = "w";
  pod["metadata"]["labels"].erase("stage");
  pod["metadata"]["labels"]["app"] = "web2";
  pod["metadata"]["annotations"] = {{"other", "b"}};
  const auto patch = HostPodPatch(pod, host, {});
  ASSERT_TRUE(patch);
  const json& meta = (*patch)["metadata"];
  EXPECT_EQ(meta["labels"], json({{"app", "web2"}, {"stage", nullptr}}));  // host-added untouched
  EXPECT_EQ(meta["annotations"]["note"], nullptr);
  EXPECT_EQ(meta["annotations"]["other"], "b");
  EXPECT_FALSE(meta["annotations"].contains("kueue.x-k8s.io/workload"));
  EXPECT_EQ(meta["annotations"]["septa.dev/copied-labels"], "app");
  EXPECT_EQ(meta["annotations"]["septa.dev/copied-annotations"], "other");
  EXPECT_EQ(meta["annotations"]["septa.dev/object-labels"], "app=\"web2\"");
  // Applied, the patch leaves nothing to do.
  host.merge_patch(*patch);
  EXPECT_EQ(HostPodPatch(pod, host, {}), std::nullopt);
}

}  // namespace
}  // namespace septa::tenancy::sync
