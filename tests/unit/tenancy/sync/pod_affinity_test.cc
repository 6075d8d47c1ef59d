// Inter-pod (anti-)affinity scoped to the virtual cluster on the host: a
// tenant's required anti-affinity with `namespaceSelector: {}` must not
// keep every other tenant's pods off its node (issue 28, a sibling of H2).
#include "tenancy/sync/pod_affinity.h"

#include <gtest/gtest.h>

#include "tests/unit/tenancy/sync/sample_views.h"

namespace septa::tenancy::sync {
namespace {

using nlohmann::json;

json HostSpecOf(const json& affinity, const VirtualClusterView& view = SampleView(gpu::Tier::kShared)) {
  json pod = SamplePod("web");
  pod["spec"]["affinity"] = affinity;
  auto out = TranslatePodDown({}, view, pod, {});
  EXPECT_TRUE(std::holds_alternative<HostPod>(out)) << std::get<Refusal>(out).message;
  return std::holds_alternative<HostPod>(out) ? std::get<HostPod>(out).object["spec"] : json();
}

TEST(SyncPodAffinity, EveryNamespaceMeansEveryNamespaceOfTheVirtualClusterOnly) {
  const VirtualClusterView view = SampleView(gpu::Tier::kShared);
  const json spec = HostSpecOf(json::parse(R"({"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
      {"labelSelector": {}, "namespaceSelector": {}, "topologyKey": "kubernetes.io/hostname"}]}})"));
  EXPECT_EQ(spec["affinity"]["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][0],
            json({{"labelSelector", json::object()},
                  {"namespaces", {view.host_namespace}},
                  {"topologyKey", "kubernetes.io/hostname"}}));
}

TEST(SyncPodAffinity, NamedAndOwnNamespacesBecomeTheNamespaceLabel) {
  const VirtualClusterView view = SampleView(gpu::Tier::kShared);
  const json spec = HostSpecOf(json::parse(R"({
      "podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 10, "podAffinityTerm":
        {"labelSelector": {"matchLabels": {"app": "db"}}, "namespaces": ["data", "cache"], "topologyKey": "zone"}}]},
      "podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": "kubernetes.io/hostname"},
        {"topologyKey": "kubernetes.io/hostname"}]}})"));
  EXPECT_EQ(spec["affinity"]["podAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"][0]["podAffinityTerm"],
            json::parse(R"({"labelSelector": {"matchLabels": {"app": "db"}, "matchExpressions": [
              {"key": "septa.dev/namespace", "operator": "In", "values": ["data", "cache"]}]},
              "namespaces": [")" +
                        view.host_namespace + R"("], "topologyKey": "zone"})"));
  const json& anti = spec["affinity"]["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"];
  EXPECT_EQ(anti[0]["labelSelector"]["matchExpressions"][0]["values"], json::array({"team"}));
  EXPECT_EQ(anti[0]["namespaces"], json::array({view.host_namespace}));
  EXPECT_FALSE(anti[1].contains("labelSelector")) << "a term without a selector still selects no pod";
  EXPECT_EQ(anti[1]["namespaces"], json::array({view.host_namespace}));
}

TEST(SyncPodAffinity, ANamespaceSelectorWithLabelsIsRefused) {
  json pod = SamplePod("web");
  pod["spec"]["affinity"] = json::parse(R"({"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
      {"labelSelector": {}, "namespaceSelector": {"matchLabels": {"team": "x"}}, "topologyKey": "h"}]}})");
  auto out = TranslatePodDown({}, SampleView(gpu::Tier::kShared), pod, {});
  ASSERT_TRUE(std::holds_alternative<Refusal>(out));
  EXPECT_EQ(std::get<Refusal>(out).field,
            "spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].namespaceSelector");
}

TEST(SyncPodAffinity, SpreadConstraintsCountTheVirtualNamespacesPods) {
  json pod = SamplePod("web");
  pod["spec"]["topologySpreadConstraints"] = json::parse(R"([{"maxSkew": 1, "topologyKey": "zone",
      "whenUnsatisfiable": "DoNotSchedule", "labelSelector": {"matchLabels": {"app": "web"}}}])");
  auto out = TranslatePodDown({}, SampleView(gpu::Tier::kShared), pod, {});
  ASSERT_TRUE(std::holds_alternative<HostPod>(out));
  EXPECT_EQ(std::get<HostPod>(out).object["spec"]["topologySpreadConstraints"][0]["labelSelector"],
            json::parse(R"({"matchLabels": {"app": "web"}, "matchExpressions": [
              {"key": "septa.dev/namespace", "operator": "In", "values": ["team"]}]})"));
}

}  // namespace
}  // namespace septa::tenancy::sync
