#include "tenancy/usage/gpu_identity.h"

#include <gtest/gtest.h>

namespace septa::tenancy::usage {
namespace {

constexpr char kIdNode[] = "real-1";

const gpu::Catalog& IdCatalog() { return gpu::Catalog::Default(); }

gpu::InventoryGpu IdWhole(int index, std::string uuid = "") {
  gpu::InventoryGpu g;
  g.model = "A100-80GB";
  g.index = index;
  g.uuid = std::move(uuid);
  return g;
}

// A MIG A100-80GB at `index` whose layout is these (profile, start).
gpu::InventoryGpu IdMig(int index, const std::vector<std::pair<std::string, int>>& layout) {
  gpu::InventoryGpu g = IdWhole(index);
  g.mig_enabled = true;
  const gpu::GpuModel* model = IdCatalog().Find("A100-80GB");
  for (const auto& [profile, start] : layout) g.mig_layout.push_back({model->ProfileIndex(profile), start});
  return g;
}

gpu::InventoryNode IdNode(std::vector<gpu::InventoryGpu> gpus) {
  gpu::InventoryNode node;
  node.name = kIdNode;
  node.gpus = std::move(gpus);
  return node;
}

DcgmGpuRef IdDevice(int index, std::string uuid) { return {.node = kIdNode, .uuid = std::move(uuid), .index = index}; }
DcgmGpuRef IdInstance(int index, std::string uuid, int gi_id, std::string profile) {
  return {.node = kIdNode, .uuid = std::move(uuid), .index = index, .gi_id = gi_id, .mig_profile = std::move(profile)};
}

TEST(GpuIdentityTest, AGpuWithoutUuidTakesTheOneTheExporterShowsAtItsIndex) {
  gpu::InventoryNode node = IdNode({IdWhole(0), IdWhole(1)});
  const LearntIdentities learnt =
      CompleteGpuIdentities(node, {IdDevice(1, "GPU-b"), IdDevice(0, "GPU-a")}, IdCatalog());
  EXPECT_EQ(learnt.uuids, 2);
  EXPECT_EQ(learnt.ambiguous, 0);
  EXPECT_EQ(node.gpus[0].uuid, "GPU-a");
  EXPECT_EQ(node.gpus[1].uuid, "GPU-b");
}

TEST(GpuIdentityTest, WhatTheInventoryKnowsIsNeverOverridden) {
  gpu::InventoryNode node = IdNode({IdWhole(0, "GPU-known")});
  EXPECT_EQ(CompleteGpuIdentities(node, {IdDevice(0, "GPU-other")}, IdCatalog()).uuids, 0);
  EXPECT_EQ(node.gpus[0].uuid, "GPU-known") << "a changed UUID is the exporter's to explain (counted as unknown)";
}

TEST(GpuIdentityTest, TwoUuidsAtOneIndexOrAnotherNodesSeriesTeachNothing) {
  gpu::InventoryNode node = IdNode({IdWhole(0), IdWhole(1)});
  DcgmGpuRef elsewhere = IdDevice(1, "GPU-elsewhere");
  elsewhere.node = "other-node";
  const LearntIdentities learnt = CompleteGpuIdentities(
      node, {IdDevice(0, "GPU-a"), IdDevice(0, "GPU-a2"), elsewhere, IdDevice(-1, "GPU-x")}, IdCatalog());
  EXPECT_EQ(learnt.uuids, 0);
  EXPECT_EQ(learnt.ambiguous, 1);
  EXPECT_EQ(node.gpus[0].uuid, "");
  EXPECT_EQ(node.gpus[1].uuid, "");
}

TEST(GpuIdentityTest, AMigInstanceWhoseProfileOccursOnceTakesItsGpuInstanceId) {
  gpu::InventoryNode node = IdNode({IdMig(0, {{"3g.40gb", 4}, {"2g.20gb", 0}, {"1g.10gb", 2}, {"1g.10gb", 3}})});
  const LearntIdentities learnt =
      CompleteGpuIdentities(node,
                            {IdInstance(0, "GPU-m", 2, "3g.40gb"), IdInstance(0, "GPU-m", 3, "2g.20gb"),
                             IdInstance(0, "GPU-m", 9, "1g.10gb"), IdInstance(0, "GPU-m", 10, "1g.10gb")},
                            IdCatalog());
  EXPECT_EQ(node.gpus[0].uuid, "GPU-m");
  EXPECT_EQ(learnt.gi_ids, 2);
  EXPECT_EQ(learnt.ambiguous, 2) << "the two 1g.10gb instances cannot be told apart by their series";
  EXPECT_EQ(node.gpus[0].mig_gi_ids, (std::map<int, int>{{0, 3}, {4, 2}}));
}

TEST(GpuIdentityTest, KnownInstanceIdsAreKeptAndAProfileTheSeriesLackIsLeftUnknown) {
  gpu::InventoryNode known = IdNode({IdMig(0, {{"7g.80gb", 0}})});
  known.gpus[0].mig_gi_ids = {{0, 0}};
  EXPECT_EQ(CompleteGpuIdentities(known, {IdInstance(0, "GPU-m", 5, "7g.80gb")}, IdCatalog()).gi_ids, 0);
  EXPECT_EQ(known.gpus[0].mig_gi_ids, (std::map<int, int>{{0, 0}}));

  gpu::InventoryNode unseen = IdNode({IdMig(0, {{"3g.40gb", 4}, {"3g.40gb", 0}})});
  const LearntIdentities learnt = CompleteGpuIdentities(unseen, {IdDevice(0, "GPU-m")}, IdCatalog());
  EXPECT_EQ(learnt.gi_ids, 0);
  EXPECT_TRUE(unseen.gpus[0].mig_gi_ids.empty());
}

TEST(GpuIdentityTest, GpuRefsOfKeepsEachReferenceOnce) {
  const DcgmSample gr{.signal = DcgmSignal::kGrEngineActive, .gpu = IdDevice(0, "GPU-a")};
  const DcgmSample fb{.signal = DcgmSignal::kFbUsed, .gpu = IdDevice(0, "GPU-a")};
  const DcgmSample other{.signal = DcgmSignal::kFbUsed, .gpu = IdDevice(1, "GPU-b")};
  EXPECT_EQ(GpuRefsOf({gr, fb, other}), (std::vector<DcgmGpuRef>{IdDevice(0, "GPU-a"), IdDevice(1, "GPU-b")}));
}

}  // namespace
}  // namespace septa::tenancy::usage
