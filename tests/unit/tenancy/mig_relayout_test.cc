#include "tenancy/mig_relayout.h"
#include "tests/unit/tenancy/capacities.h"

#include <gtest/gtest.h>

#include "gpu/catalog.h"
#include "tenancy/capacity_placement.h"

namespace septa::tenancy {
namespace {

using gpu::Catalog;
using gpu::InventoryNode;
using gpu::PlacementEngine;

const gpu::GpuModel& H100() { return *Catalog::Default().Find("H100-80GB"); }
int Profile(const char* name) { return H100().ProfileIndex(name); }

// A node of H100s, each laid out as seven 1g.10gb instances.
InventoryNode SevenSlices(const std::string& name, int gpus) {
  InventoryNode node;
  node.name = name;
  node.cpu_milli = 96000;
  node.memory_mib = 1 << 20;
  for (int g = 0; g < gpus; ++g) {
    gpu::InventoryGpu gpu{"H100-80GB", g, name + "-gpu" + std::to_string(g), true, {}};
    for (int s = 0; s < 7; ++s) gpu.mig_layout.push_back({Profile("1g.10gb"), s});
    node.gpus.push_back(gpu);
  }
  return node;
}

std::unique_ptr<PlacementEngine> EngineOf(std::vector<InventoryNode> nodes) {
  auto e = PlacementEngine::Create(std::move(nodes), Catalog::Default());
  EXPECT_TRUE(e.ok()) << e.status().ToString();
  return std::move(e).value();
}

using test::Mig;

// h100-3: GPU 0 holds a 1g.10gb of another tenant; GPU 1 runs nothing.
std::unique_ptr<PlacementEngine> OneBusyOneFree() {
  auto e = EngineOf({SevenSlices("h100-3", 2)});
  auto held = PlaceCapacity(*e, "other", "vc", Mig({{"1g.10gb", 1, ""}}));
  EXPECT_TRUE(held.ok()) << held.status().ToString();
  EXPECT_EQ(held->reservation.mig.at(0).gpu, 0);
  return e;
}

TEST(PlanMigRelayout, ReLaysOutOnlyAGpuThatRunsNothing) {
  auto e = OneBusyOneFree();
  const Capacity want = Mig({{"3g.40gb", 2, "H100-80GB"}});
  auto refused = PlaceCapacity(*e, "acme", "vc1", want);
  ASSERT_EQ(refused.status().code(), Code::kResourceExhausted);

  auto plan = PlanMigRelayout(*e, Catalog::Default(), want);
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  EXPECT_TRUE(plan->meets);
  ASSERT_EQ(plan->targets.size(), 1u);
  EXPECT_EQ(plan->targets[0].node, "h100-3");
  EXPECT_EQ(plan->targets[0].gpu, 1);
  EXPECT_EQ(gpu::LayoutToString(H100(), plan->targets[0].layout), "3g.40gb@0 3g.40gb@4");
  EXPECT_EQ(plan->more_free, std::vector<int>{2});

  const Status hinted = WithRelayoutHint(refused.status(), *plan);
  EXPECT_EQ(hinted.code(), Code::kResourceExhausted);
  const std::string said =
      "2 × 3g.40gb requested, 0 free on H100-80GB; 2 more would be free after re-laying out h100-3 GPU 1, which run "
      "nothing";
  ASSERT_EQ(hinted.violations().size(), 1u);
  EXPECT_EQ(hinted.violations()[0].field, "capacity.mig[0]");
  EXPECT_EQ(hinted.violations()[0].description, said);
  EXPECT_EQ(hinted.message(), "not enough free GPU capacity: capacity.mig[0]: " + said);
}

TEST(PlanMigRelayout, TheTargetLayoutsTakeTheRequestAndKeepWhatIsHeld) {
  auto e = OneBusyOneFree();
  const Capacity want = Mig({{"3g.40gb", 2, ""}});
  auto plan = PlanMigRelayout(*e, Catalog::Default(), want);
  ASSERT_TRUE(plan.ok() && plan->meets);
  auto relaid = EngineOf(WithLayoutTargets(e->nodes(), plan->targets));
  auto other = PlaceCapacity(*relaid, "other", "vc", Mig({{"1g.10gb", 1, ""}}));
  ASSERT_TRUE(other.ok());
  EXPECT_EQ(other->reservation.mig[0].gpu, 0);  // the untouched GPU keeps its layout
  auto placed = PlaceCapacity(*relaid, "acme", "vc1", want);
  ASSERT_TRUE(placed.ok()) << placed.status().ToString();
  for (const ReservedMig& m : placed->reservation.mig) EXPECT_EQ(m.gpu, 1);
}

// The slices a re-layout does not need get the largest instances that fit:
// the next request for them needs no re-layout (which would need the GPU
// idle and pause its node).
TEST(PlanMigRelayout, TheReLaidOutGpuGetsTheLargestInstancesThatFitBesideTheRequest) {
  auto e = OneBusyOneFree();
  const Capacity want = Mig({{"2g.20gb", 1, ""}});
  auto plan = PlanMigRelayout(*e, Catalog::Default(), want);
  ASSERT_TRUE(plan.ok() && plan->meets);
  ASSERT_EQ(plan->targets.size(), 1u);
  EXPECT_EQ(gpu::LayoutToString(H100(), plan->targets[0].layout), "3g.40gb@4 2g.20gb@0 2g.20gb@2");
  EXPECT_EQ(plan->more_free, std::vector<int>{2});
  auto relaid = EngineOf(WithLayoutTargets(e->nodes(), plan->targets));
  ASSERT_TRUE(PlaceCapacity(*relaid, "acme", "vc1", want).ok());
  auto next = PlaceCapacity(*relaid, "beta", "vc", Mig({{"3g.40gb", 1, ""}}));
  ASSERT_TRUE(next.ok()) << next.status().ToString();
  EXPECT_EQ(next->reservation.mig[0].gpu, 1);
}

TEST(PlanMigRelayout, SaysWhatItWouldAddWhenItCannotMeetTheRequest) {
  auto e = OneBusyOneFree();
  const Capacity want = Mig({{"3g.40gb", 3, "H100-80GB"}});
  auto refused = PlaceCapacity(*e, "acme", "vc1", want);
  ASSERT_FALSE(refused.ok());
  auto plan = PlanMigRelayout(*e, Catalog::Default(), want);
  ASSERT_TRUE(plan.ok());
  EXPECT_FALSE(plan->meets);
  EXPECT_EQ(plan->more_free, std::vector<int>{2});
  EXPECT_EQ(WithRelayoutHint(refused.status(), *plan).violations().at(0).description,
            "3 × 3g.40gb requested, 0 free on H100-80GB; 2 more would be free after re-laying out h100-3 GPU 1, which "
            "run nothing");
}

TEST(PlanMigRelayout, NoHintWhenEveryGpuRunsSomething) {
  auto e = EngineOf({SevenSlices("h100-3", 1)});
  ASSERT_TRUE(PlaceCapacity(*e, "other", "vc", Mig({{"1g.10gb", 1, ""}})).ok());
  const Capacity want = Mig({{"3g.40gb", 1, ""}});
  auto refused = PlaceCapacity(*e, "acme", "vc1", want);
  auto plan = PlanMigRelayout(*e, Catalog::Default(), want);
  ASSERT_TRUE(plan.ok());
  EXPECT_FALSE(plan->meets);
  EXPECT_TRUE(plan->targets.empty());
  const Status hinted = WithRelayoutHint(refused.status(), *plan);
  EXPECT_EQ(hinted.message(), refused.status().message());
  EXPECT_EQ(hinted.violations(), refused.status().violations());
}

TEST(PlanMigRelayout, SkipsNodesThatAreNotReadyOrHoldWholeGpus) {
  InventoryNode down = SevenSlices("h100-1", 1);
  down.health = gpu::NodeHealth::kNotReady;
  auto e = EngineOf({down});
  auto plan = PlanMigRelayout(*e, Catalog::Default(), Mig({{"3g.40gb", 1, ""}}));
  ASSERT_TRUE(plan.ok());
  EXPECT_TRUE(plan->targets.empty());
  EXPECT_FALSE(plan->meets);
}

TEST(NodeMigConfig, KeepsTheLayoutsOfGpusNotBeingChanged) {
  InventoryNode node = SevenSlices("h100-3", 3);
  MigLayoutTarget target{"h100-3", 1, {{Profile("3g.40gb"), 0}, {Profile("3g.40gb"), 4}}, "", {}};
  auto groups = NodeMigConfig(Catalog::Default(), node, {target});
  ASSERT_TRUE(groups.ok()) << groups.status().ToString();
  ASSERT_EQ(groups->size(), 2u);
  EXPECT_EQ((*groups)[0].devices, (std::vector<int>{0, 2}));
  EXPECT_EQ((*groups)[0].mig_devices, (std::vector<std::pair<std::string, int>>{{"1g.10gb", 7}}));
  EXPECT_EQ((*groups)[1].devices, std::vector<int>{1});
  EXPECT_EQ((*groups)[1].mig_devices, (std::vector<std::pair<std::string, int>>{{"3g.40gb", 2}}));

  // What mig-parted makes of it is the target and the kept layouts.
  gpu::MigPartedConfig config;
  const TimePoint at = TimePoint{} + std::chrono::seconds(1700000000);
  const std::string name = MigConfigName("h100-3", *groups, at);
  config.configs[name] = *groups;
  for (int g = 0; g < 3; ++g) {
    auto setup = gpu::MigSetupFor(config, name, H100(), g);
    ASSERT_TRUE(setup.ok()) << setup.status().ToString();
    node.gpus[g].mig_layout = setup->layout;
  }
  EXPECT_TRUE(LayoutTargetsReached(node, {target}));
  EXPECT_FALSE(LayoutTargetsReached(SevenSlices("h100-3", 3), {target}));

  // A label value (at most 63 characters), new for every request.
  EXPECT_LE(name.size(), 63u);
  EXPECT_EQ(name.rfind("septa-", 0), 0u);
  EXPECT_EQ(name, MigConfigName("h100-3", *groups, at));
  EXPECT_NE(name, MigConfigName("h100-3", *groups, at + std::chrono::microseconds(1)));
  EXPECT_NE(name, MigConfigName("h100-4", *groups, at));
}

}  // namespace
}  // namespace septa::tenancy
