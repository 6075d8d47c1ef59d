// Placement inside the reservation around the other synced pods, and the
// assignment recorded on the host pod.
#include <gtest/gtest.h>

#include "tenancy/sync/bookkeeping.h"
#include "tests/unit/tenancy/sync/sample_views.h"

namespace septa::tenancy::sync {
namespace {

using nlohmann::json;

std::variant<HostPod, Refusal> Sync(const std::string& name, const std::string& gpus, gpu::Tier tier,
                                    const std::vector<PodAssignment>& others) {
  json pod = SamplePod(name, gpus);
  if (tier == gpu::Tier::kExclusive) MakeRestricted(pod);
  return TranslatePodDown(SyncSettings{}, SampleView(tier), pod, others);
}

// Places pods of `gpus` each until one is refused; returns the assignments.
std::vector<PodAssignment> Fill(gpu::Tier tier, const std::string& gpus, Refusal* refusal) {
  std::vector<PodAssignment> placed;
  for (int i = 0; i < 20; ++i) {
    auto out = Sync("p" + std::to_string(i), gpus, tier, placed);
    if (auto* r = std::get_if<Refusal>(&out)) {
      *refusal = *r;
      return placed;
    }
    // The host pod is the record: read the assignment back from it.
    const auto recorded = AssignmentOf(std::get<HostPod>(out).object);
    EXPECT_EQ(recorded, std::get<HostPod>(out).assignment);
    placed.push_back(*recorded);
  }
  ADD_FAILURE() << "never refused";
  return placed;
}

TEST(SyncPlacement, DedicatedFillsThenRefusesThenFrees) {
  Refusal refusal;
  std::vector<PodAssignment> placed = Fill(gpu::Tier::kDedicated, "1", &refusal);
  ASSERT_EQ(placed.size(), 3u);
  EXPECT_EQ(placed[0].node, "h100-1");  // best fit: the single free GPU first
  EXPECT_EQ(placed[1].gpus, std::vector<int>{2});
  EXPECT_EQ(placed[2].gpus, std::vector<int>{3});
  EXPECT_EQ(refusal.message, "1 GPUs requested, the reservation has 0 free of 3");
  placed.erase(placed.begin() + 1);  // the pod on GPU 2 finished
  auto out = Sync("again", "1", gpu::Tier::kDedicated, placed);
  ASSERT_TRUE(std::holds_alternative<HostPod>(out));
  EXPECT_EQ(std::get<HostPod>(out).assignment.gpus, std::vector<int>{2});
}

TEST(SyncPlacement, IsolatedFillsTheLargestProfileThenTheNext) {
  Refusal refusal;
  const std::vector<PodAssignment> placed = Fill(gpu::Tier::kIsolated, "1", &refusal);
  ASSERT_EQ(placed.size(), 3u);
  EXPECT_EQ(placed[0].mig_profile, "3g.40gb");
  EXPECT_EQ(placed[1].mig_profile, "3g.40gb");
  EXPECT_NE(placed[0].node, placed[1].node);
  EXPECT_EQ(placed[2].mig_profile, "1g.10gb");
  EXPECT_EQ(refusal.message, "1 3g.40gb instances requested, the reservation has 0 free of 2");
}

TEST(SyncPlacement, SharedFillsBudgetsPerGpu) {
  Refusal refusal;
  const std::vector<PodAssignment> placed = Fill(gpu::Tier::kShared, "1", &refusal);  // 250 milli each
  ASSERT_EQ(placed.size(), 3u);                                                       // 500 + 250 held
  EXPECT_EQ(placed[0].gpus, std::vector<int>{1});
  EXPECT_EQ(refusal.message, "250 milli-GPU requested, the reservation has 0 free of 750");
}

TEST(SyncPlacement, ExclusiveCountsGpusOfTheNodes) {
  Refusal refusal;
  const std::vector<PodAssignment> placed = Fill(gpu::Tier::kExclusive, "3", &refusal);
  ASSERT_EQ(placed.size(), 2u);  // 8 GPUs on h100-1
  EXPECT_EQ(refusal.message, "3 GPUs requested, the reservation has 2 free of 8");
}

TEST(SyncPlacement, NotReadyNodesAreSkipped) {
  VirtualClusterView view = SampleView(gpu::Tier::kDedicated);
  view.nodes[1].health = gpu::NodeHealth::kNotReady;
  auto out = TranslatePodDown({}, view, SamplePod("t", "1"), {});
  ASSERT_TRUE(std::holds_alternative<HostPod>(out));
  EXPECT_EQ(std::get<HostPod>(out).assignment.node, "h100-0");
}

TEST(SyncAssignment, RoundTripsAndDistrustsEdits) {
  auto out = TranslatePodDown({}, SampleView(gpu::Tier::kShared), SamplePod("t", "1"), {});
  json pod = std::get<HostPod>(out).object;
  EXPECT_EQ(AssignmentOf(pod), std::get<HostPod>(out).assignment);
  pod["metadata"]["annotations"]["septa.dev/assignment"] = "{\"node\":\"h100-0\"}";
  EXPECT_EQ(AssignmentOf(pod), std::nullopt);
  pod["metadata"]["annotations"]["septa.dev/assignment"] = "not json";
  EXPECT_EQ(AssignmentOf(pod), std::nullopt);
  pod["metadata"]["annotations"].erase("septa.dev/assignment");
  EXPECT_EQ(AssignmentOf(pod), std::nullopt);
  EXPECT_EQ(AssignmentOf(json::object()), std::nullopt);
}

}  // namespace
}  // namespace septa::tenancy::sync
