// A GPU node belongs to its GPUs' holders (issue 28, H2): CPU pods go to the
// CPU pool, and GPU pods take at most their holder's share of the node's
// CPU and memory.
#include "tenancy/sync/node_share.h"

#include <gtest/gtest.h>

#include "tenancy/host/gpu_holdings.h"
#include "tests/unit/tenancy/sync/sample_views.h"

namespace septa::tenancy::sync {
namespace {

using nlohmann::json;

json Container(const json& requests, const json& limits = json::object()) {
  json resources = json::object();
  if (!requests.empty()) resources["requests"] = requests;
  if (!limits.empty()) resources["limits"] = limits;
  return {{"name", "c"}, {"image", "busybox"}, {"resources", resources}};
}

PodResources Requests(const json& spec) {
  auto out = EffectiveRequests({{"spec", spec}});
  EXPECT_TRUE(std::holds_alternative<PodResources>(out)) << std::get<Refusal>(out).field;
  return std::holds_alternative<PodResources>(out) ? std::get<PodResources>(out) : PodResources{};
}

// kube-scheduler's rule (KEP-753): sidecars add up and run beside later init containers.
TEST(SyncNodeShare, EffectiveRequestsAsKubernetesCountsThem) {
  EXPECT_EQ(
      Requests({{"containers",
                 {Container({{"cpu", "500m"}, {"memory", "1Gi"}}), Container({{"cpu", "1"}, {"memory", "512Mi"}})}}}),
      (PodResources{1500, 1536}));
  // A limit without a request is the request.
  EXPECT_EQ(Requests({{"containers", {Container({}, {{"cpu", "2"}, {"memory", "100M"}})}}}),
            (PodResources{2000, 96}));  // 100 MB rounds up to 96 MiB
  // A regular init container that asks more than the containers sets the pod's request.
  EXPECT_EQ(Requests({{"initContainers", {Container({{"cpu", "4"}})}}, {"containers", {Container({{"cpu", "1"}})}}}),
            (PodResources{4000, 0}));
  // A sidecar adds to the containers, and runs beside the init containers after it.
  json sidecar = Container({{"cpu", "1"}});
  sidecar["restartPolicy"] = "Always";
  EXPECT_EQ(
      Requests({{"initContainers", {sidecar, Container({{"cpu", "3"}})}}, {"containers", {Container({{"cpu", "2"}})}}}),
      (PodResources{4000, 0}));  // max(2 + 1, 3 + 1)
  EXPECT_EQ(
      Requests({{"initContainers", {Container({{"cpu", "3"}}), sidecar}}, {"containers", {Container({{"cpu", "2"}})}}}),
      (PodResources{3000, 0}));  // max(2 + 1, 3): the sidecar starts after
  EXPECT_EQ(Requests({{"containers", {Container({{"cpu", "1"}})}}, {"overhead", {{"cpu", "250m"}}}}),
            (PodResources{1250, 0}));
  // Absurd quantities saturate rather than wrap around.
  EXPECT_GT(Requests({{"containers", {Container({{"memory", "8Pi"}}), Container({{"memory", "8Pi"}})}}}).memory_mib, 0);
  auto bad = EffectiveRequests({{"spec", {{"containers", {Container({{"cpu", "lots"}})}}}}});
  ASSERT_TRUE(std::holds_alternative<Refusal>(bad));
  EXPECT_EQ(std::get<Refusal>(bad).field, "spec.containers[0].resources.requests[cpu]");
}

TEST(SyncNodeShare, InProportionToWhatIsHeldOfTheNodesGpus) {
  const gpu::InventoryNode node = SampleNode("h100-0", 8);                         // 192 CPUs, 2 TiB
  NodeShare share = ShareOf(node, SampleView(gpu::Tier::kDedicated).reservation);  // GPUs 2 and 3
  EXPECT_EQ(share.share, (PodResources{48000, 524288}));
  EXPECT_EQ(share.held, "2 of 8 GPUs");
  share = ShareOf(node, SampleView(gpu::Tier::kIsolated).reservation);  // 3g.40gb (4 slices) + 1g.10gb (1)
  EXPECT_EQ(share.share, (PodResources{15000, 163840}));
  EXPECT_EQ(share.held, "5 of 64 MIG memory slices");
  share = ShareOf(node, SampleView(gpu::Tier::kShared).reservation);  // 750 milli
  EXPECT_EQ(share.share, (PodResources{18000, 196608}));
  share = ShareOf(SampleNode("h100-1", 8), SampleView(gpu::Tier::kExclusive).reservation);
  EXPECT_EQ(share.share, (PodResources{192000, 2097152}));
  EXPECT_EQ(ShareOf(SampleNode("h100-9", 8), SampleView(gpu::Tier::kDedicated).reservation).share, PodResources{});
}

// H2's repro: a GPU pod asking for most of a node's CPU takes only its
// holder's share; the next node with room is chosen, else it is refused.
TEST(SyncNodeShare, AGpuPodTakesNoMoreThanItsShareOfTheNode) {
  const VirtualClusterView view = SampleView(gpu::Tier::kDedicated);  // h100-0: 2 GPUs (48 CPUs); h100-1: 1 (24)
  json pod = SamplePod("greedy", "1");
  pod["spec"]["containers"][0]["resources"]["requests"] = {{"cpu", "63"}, {"memory", "500Gi"}};
  auto out = TranslatePodDown({}, view, pod, {});
  ASSERT_TRUE(std::holds_alternative<Refusal>(out));
  const Refusal& refusal = std::get<Refusal>(out);
  EXPECT_EQ(refusal.field, "spec.containers[*].resources.requests[cpu]");
  EXPECT_NE(refusal.message.find("share of node"), std::string::npos) << refusal.message;
  EXPECT_NE(refusal.message.find("of 8 GPUs"), std::string::npos) << refusal.message;

  // 30 CPUs fit only on h100-0 (48), even where best fit by GPUs would pick h100-1.
  pod["spec"]["containers"][0]["resources"]["requests"] = {{"cpu", "30"}, {"memory", "1Gi"}};
  out = TranslatePodDown({}, view, pod, {});
  ASSERT_TRUE(std::holds_alternative<HostPod>(out)) << std::get<Refusal>(out).message;
  const PodAssignment first = std::get<HostPod>(out).assignment;
  EXPECT_EQ(first.node, "h100-0");
  EXPECT_EQ(first.cpu_milli, 30000);
  EXPECT_EQ(first.memory_mib, 1024);
  // Beside it, a second one fits nowhere: h100-0 has 18 CPUs left, h100-1 24.
  pod["metadata"]["name"] = "greedy-2";
  out = TranslatePodDown({}, view, pod, {first});
  ASSERT_TRUE(std::holds_alternative<Refusal>(out));
  EXPECT_NE(std::get<Refusal>(out).message.find("30 of it in use"), std::string::npos)
      << std::get<Refusal>(out).message;
  // The assignment records the requests, so a restarted syncer counts them again.
  auto read_back = AssignmentOf(std::get<HostPod>(TranslatePodDown({}, view, SamplePod("small", "1"), {})).object);
  ASSERT_TRUE(read_back);
}

// A pod that uses no GPU runs on the CPU pool, whatever its node selector
// asks; its tolerations of platform taints do not reach the host.
TEST(SyncNodeShare, ACpuPodStaysOffGpuNodes) {
  for (gpu::Tier tier : {gpu::Tier::kShared, gpu::Tier::kIsolated, gpu::Tier::kDedicated}) {
    VirtualClusterView view = SampleView(tier);
    json pod = SamplePod("hog");
    pod["spec"]["nodeSelector"] = {{"kubernetes.io/hostname", "a100-0"}};
    pod["spec"]["tolerations"] = json::parse(R"([{"key":"dedicated","operator":"Equal","value":"gpu"},
      {"key":"node.kubernetes.io/not-ready","operator":"Exists","effect":"NoExecute","tolerationSeconds":300}])");
    if (tier == gpu::Tier::kDedicated) MakeRestricted(pod);
    auto out = TranslatePodDown({}, view, pod, {});
    ASSERT_TRUE(std::holds_alternative<HostPod>(out)) << std::get<Refusal>(out).message;
    const json& spec = std::get<HostPod>(out).object["spec"];
    EXPECT_EQ(spec["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"],
              json::parse(R"([{"matchExpressions":[{"key":"nvidia.com/gpu.product","operator":"DoesNotExist"}]}])"))
        << gpu::TierName(tier);
    EXPECT_EQ(spec["nodeSelector"], pod["spec"]["nodeSelector"]) << "the tenant's selector stays, ANDed with ours";
    EXPECT_EQ(spec["tolerations"], json::parse(R"([{"key":"node.kubernetes.io/not-ready","operator":"Exists",
      "effect":"NoExecute","tolerationSeconds":300}])"));
  }
}

}  // namespace
}  // namespace septa::tenancy::sync
