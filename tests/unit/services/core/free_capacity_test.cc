// What is free for a tier (services/core/free_capacity.h): each tier sees
// only its own kind, anything held or on a node that is not Ready is not free.
#include "services/core/free_capacity.h"

#include <gtest/gtest.h>

namespace septa::core {
namespace {

HeldGpu Whole(const std::string& model, int index, std::optional<Holder> holder = std::nullopt) {
  HeldGpu g;
  g.gpu.model = model;
  g.gpu.index = index;
  g.holder = std::move(holder);
  return g;
}

HeldGpu Mig(int index, std::vector<std::pair<std::string, bool>> instances) {
  HeldGpu g = Whole("H100-80GB", index);
  g.gpu.mig_enabled = true;
  int start = 0;
  for (const auto& [profile, held] : instances) {
    HeldMigInstance i{profile, start++, 1, std::nullopt};
    if (held) i.holder = Holder{"acme", "train", false};
    g.instances.push_back(i);
  }
  return g;
}

HeldNode Node(const std::string& name, std::vector<HeldGpu> gpus) {
  HeldNode n;
  n.node.name = name;
  n.gpus = std::move(gpus);
  return n;
}

const Holder kTaken{"other", "vc", false};

std::vector<HeldNode> Fleet() {
  HeldGpu shared = Whole("A100-80GB", 1);
  shared.shares = {{kTaken, 250, 10000}, {kTaken, 500, 20000}};
  HeldGpu full = Whole("A100-80GB", 2);
  full.shares = {{kTaken, 1000, 80000}};
  HeldNode down = Node("down", {Whole("A100-80GB", 0), Mig(1, {{"3g.40gb", false}})});
  down.node.health = gpu::NodeHealth::kNotReady;
  HeldNode relayout = Node("relayout", {Mig(0, {{"1g.10gb", false}})});
  relayout.layout_settled = false;
  HeldNode held_node = Node("held", {Whole("T4", 0)});
  held_node.holder = kTaken;
  return {
      Node("a100-0", {Whole("A100-80GB", 0), shared, full, Whole("A100-80GB", 3, kTaken)}),
      Node("a100-1", {Whole("A100-80GB", 0), Whole("A100-80GB", 1)}),
      Node("h100-0",
           {Mig(0, {{"3g.40gb", false}, {"3g.40gb", true}, {"1g.10gb", false}}), Mig(1, {{"3g.40gb", false}})}),
      down,
      relayout,
      held_node,
  };
}

TEST(FreeCapacity, IsolatedSeesFreeMigInstancesInTheCurrentLayouts) {
  const FreeCapacity free = FreeCapacityOf(Fleet(), gpu::Tier::kIsolated, gpu::Catalog::Default());
  EXPECT_EQ(free.mig, (std::vector<FreeCount>{{"H100-80GB", "1g.10gb", 1}, {"H100-80GB", "3g.40gb", 2}}));
  EXPECT_TRUE(free.gpus.empty());
  EXPECT_TRUE(free.nodes.empty());
  EXPECT_TRUE(free.shared.empty());
}

TEST(FreeCapacity, DedicatedSeesUntouchedWholeGpusOnNodesWithoutShares) {
  const FreeCapacity free = FreeCapacityOf(Fleet(), gpu::Tier::kDedicated, gpu::Catalog::Default());
  // a100-1's two; none of a100-0, whose GPUs 1 and 2 hold shares (the tier rule).
  EXPECT_EQ(free.gpus, (std::vector<FreeCount>{{"A100-80GB", "", 2}}));
  EXPECT_TRUE(free.mig.empty());
  std::vector<HeldNode> only_whole = {Node("a100-0", {Whole("A100-80GB", 0), Whole("A100-80GB", 1, kTaken)})};
  EXPECT_EQ(FreeCapacityOf(only_whole, gpu::Tier::kDedicated, gpu::Catalog::Default()).gpus,
            (std::vector<FreeCount>{{"A100-80GB", "", 1}}));
}

TEST(FreeCapacity, ExclusiveSeesNodesNobodyTouches) {
  const FreeCapacity free = FreeCapacityOf(Fleet(), gpu::Tier::kExclusive, gpu::Catalog::Default());
  // a100-1, and "relayout": a node whose MIG layout is changing is still whole.
  EXPECT_EQ(free.nodes, (std::vector<FreeCount>{{"A100-80GB", "", 1}, {"H100-80GB", "", 1}}));
}

TEST(FreeCapacity, SharedSeesTheRoomOnTimeSlicedGpusOfNodesWithoutWholeGpus) {
  const FreeCapacity free = FreeCapacityOf(Fleet(), gpu::Tier::kShared, gpu::Catalog::Default());
  ASSERT_EQ(free.shared.size(), 1u);
  EXPECT_EQ(free.shared[0].model, "A100-80GB");
  EXPECT_EQ(free.shared[0].gpus, 2);  // a100-1's two; a100-0 holds a whole GPU (the tier rule)
  EXPECT_EQ(free.shared[0].milli_gpu, 2000);
  EXPECT_EQ(free.shared[0].largest_milli_gpu, 1000);
  HeldGpu shared = Whole("A100-80GB", 1);
  shared.shares = {{kTaken, 250, 10000}, {kTaken, 500, 20000}};
  const FreeCapacity some =
      FreeCapacityOf({Node("a100-9", {Whole("A100-80GB", 0), shared})}, gpu::Tier::kShared, gpu::Catalog::Default());
  ASSERT_EQ(some.shared.size(), 1u);
  EXPECT_EQ(some.shared[0].gpus, 2);
  EXPECT_EQ(some.shared[0].milli_gpu, 1250);
  const std::int64_t a100 = gpu::Catalog::Default().Find("A100-80GB")->memory_mib;
  EXPECT_EQ(some.shared[0].gpu_memory_mib, 2 * a100 - 30000);
  EXPECT_EQ(some.shared[0].largest_gpu_memory_mib, a100);
}

TEST(FreeCapacity, NothingIsFreeOfAnEmptyInventory) {
  for (gpu::Tier tier : {gpu::Tier::kShared, gpu::Tier::kIsolated, gpu::Tier::kDedicated, gpu::Tier::kExclusive}) {
    const FreeCapacity free = FreeCapacityOf({}, tier, gpu::Catalog::Default());
    EXPECT_EQ(free.tier, tier);
    EXPECT_TRUE(free.mig.empty() && free.gpus.empty() && free.nodes.empty() && free.shared.empty());
  }
}

}  // namespace
}  // namespace septa::core
