#include "tenancy/capacity_placement.h"
#include "tests/unit/tenancy/capacities.h"

#include <gtest/gtest.h>

#include <numeric>

#include "gpu/catalog.h"

namespace septa::tenancy {
namespace {

using gpu::Catalog;
using gpu::InventoryGpu;
using gpu::InventoryNode;
using gpu::PlacementEngine;
using gpu::Tier;

int Profile(const char* name) { return Catalog::Default().Find("H100-80GB")->ProfileIndex(name); }

InventoryNode Node(const std::string& name, const std::string& model, int gpus, bool mig = false) {
  InventoryNode node;
  node.name = name;
  node.cpu_milli = 96000;
  node.memory_mib = 1 << 20;
  for (int g = 0; g < gpus; ++g) {
    InventoryGpu gpu{model, g, name + "-gpu" + std::to_string(g), mig, {}};
    // 3g.40gb@0 + 2g.20gb@4 + 1g.10gb@6
    if (mig) gpu.mig_layout = {{Profile("3g.40gb"), 0}, {Profile("2g.20gb"), 4}, {Profile("1g.10gb"), 6}};
    node.gpus.push_back(gpu);
  }
  return node;
}

std::vector<InventoryNode> Cluster() {
  return {Node("a100-0", "A100-80GB", 8), Node("a100-1", "A100-80GB", 8), Node("h100-0", "H100-80GB", 2, true),
          Node("t4-0", "T4", 4), Node("t4-1", "T4", 4)};
}

std::unique_ptr<PlacementEngine> Engine() {
  auto e = PlacementEngine::Create(Cluster(), Catalog::Default());
  EXPECT_TRUE(e.ok()) << e.status().ToString();
  return std::move(e).value();
}

using test::Mig;
using test::Shared;
using test::Whole;

TEST(PlaceCapacity, ASharedBudgetIsCutIntoFractionsOfAtMostOneGpu) {
  auto e = Engine();
  auto placed = PlaceCapacity(*e, "acme", "vc1", Shared(1500, 20000));
  ASSERT_TRUE(placed.ok()) << placed.status().ToString();
  const auto& shares = placed->reservation.shares;
  ASSERT_EQ(shares.size(), 2u);
  EXPECT_EQ(shares[0].milli_gpu, 1000);
  EXPECT_EQ(shares[1].milli_gpu, 500);
  EXPECT_EQ(shares[0].gpu_memory_mib + shares[1].gpu_memory_mib, 20000);
  EXPECT_EQ(placed->reservation.tenant, "acme");
  EXPECT_EQ(placed->reservation.vcluster, "vc1");
  EXPECT_EQ(placed->allocations.size(), 2u);
  for (const ReservedShare& s : shares) EXPECT_NE(s.node, "h100-0");  // never a fraction on a MIG GPU
}

TEST(PlaceCapacity, MigInstancesAtFixedPlacements) {
  auto e = Engine();
  auto placed = PlaceCapacity(*e, "acme", "vc1", Mig({{"3g.40gb", 2, ""}, {"1g.10gb", 2, "H100-80GB"}}));
  ASSERT_TRUE(placed.ok()) << placed.status().ToString();
  const auto& mig = placed->reservation.mig;
  ASSERT_EQ(mig.size(), 4u);
  EXPECT_EQ(mig[0].profile, "3g.40gb");
  EXPECT_EQ(mig[0].start, 0);
  EXPECT_EQ(mig[0].slices, 4);
  EXPECT_NE(mig[0].gpu, mig[1].gpu);  // one 3g.40gb per GPU in this layout
  for (std::size_t i = 2; i < 4; ++i) {
    EXPECT_EQ(mig[i].profile, "1g.10gb");
    EXPECT_EQ(mig[i].slices, 1);
  }
}

TEST(PlaceCapacity, WholeGpusArePackedOntoFewNodes) {
  auto e = Engine();
  auto placed = PlaceCapacity(*e, "acme", "vc1", Whole(Tier::kDedicated, "A100-80GB", 10));
  ASSERT_TRUE(placed.ok()) << placed.status().ToString();
  const auto& gpus = placed->reservation.gpus;
  ASSERT_EQ(gpus.size(), 10u);
  std::map<std::string, int> per_node;
  for (const ReservedGpu& g : gpus) per_node[g.node]++;
  EXPECT_EQ(per_node.size(), 2u);
  EXPECT_EQ(std::max(per_node.begin()->second, per_node.rbegin()->second), 8);
}

TEST(PlaceCapacity, ExclusiveNodesOfAModel) {
  auto e = Engine();
  auto placed = PlaceCapacity(*e, "bank", "vc1", Whole(Tier::kExclusive, "T4", 2));
  ASSERT_TRUE(placed.ok()) << placed.status().ToString();
  EXPECT_EQ(placed->reservation.nodes, (std::vector<std::string>{"t4-0", "t4-1"}));
  auto more = PlaceCapacity(*e, "other", "vc1", Whole(Tier::kExclusive, "T4", 1));
  ASSERT_FALSE(more.ok());
  EXPECT_EQ(more.status().violations().at(0).field, "capacity.nodes.count");
  EXPECT_EQ(more.status().violations().at(0).description, "1 whole nodes requested, 0 free on T4");
}

TEST(PlaceCapacity, AShortfallPlacesNothingAndSaysWhatIsShort) {
  auto e = Engine();
  // Two H100s with one 3g.40gb each: the third cannot be had.
  auto placed = PlaceCapacity(*e, "acme", "vc1", Mig({{"1g.10gb", 1, ""}, {"3g.40gb", 3, "H100-80GB"}}));
  ASSERT_FALSE(placed.ok());
  EXPECT_EQ(placed.status().code(), Code::kResourceExhausted);
  ASSERT_EQ(placed.status().violations().size(), 1u);
  EXPECT_EQ(placed.status().violations()[0].field, "capacity.mig[1]");
  EXPECT_EQ(placed.status().violations()[0].description, "3 × 3g.40gb requested, 2 free on H100-80GB");
  EXPECT_TRUE(e->allocations().empty());  // the 1g.10gb and both 3g.40gb were given back

  auto gpus = PlaceCapacity(*e, "acme", "vc2", Whole(Tier::kDedicated, "A100-80GB", 17));
  ASSERT_FALSE(gpus.ok());
  EXPECT_EQ(gpus.status().violations()[0].description, "17 whole GPUs requested, 16 free on A100-80GB");
  EXPECT_TRUE(e->allocations().empty());
}

TEST(PlaceCapacity, ASharedBudgetTakesSmallerFractionsWhereNoWholeGpuIsFree) {
  std::vector<InventoryNode> nodes = {Node("t4-0", "T4", 2)};
  auto engine = PlacementEngine::Create(nodes, Catalog::Default());
  ASSERT_TRUE(engine.ok());
  auto& e = **engine;
  ASSERT_TRUE(PlaceCapacity(e, "a", "x", Shared(600, 0)).ok());
  ASSERT_TRUE(PlaceCapacity(e, "b", "y", Shared(600, 0)).ok());
  // 400 milli left on each GPU: 800 more fit only as two fractions of 400.
  auto placed = PlaceCapacity(e, "c", "z", Shared(800, 1600));
  ASSERT_TRUE(placed.ok()) << placed.status().ToString();
  const auto& shares = placed->reservation.shares;
  ASSERT_EQ(shares.size(), 2u);
  EXPECT_EQ(shares[0].milli_gpu, 400);
  EXPECT_EQ(shares[1].milli_gpu, 400);
  EXPECT_NE(shares[0].gpu, shares[1].gpu);
  EXPECT_EQ(shares[0].gpu_memory_mib, 800);
  auto over = PlaceCapacity(e, "d", "w", Shared(100, 0));
  ASSERT_FALSE(over.ok());
  EXPECT_EQ(over.status().violations()[0].description, "100 milli-GPU requested, 0 found on time-shared GPUs");
  EXPECT_EQ(over.status().violations()[0].field, "capacity.shared.milli_gpu");
}

TEST(HoldReservation, ARebuiltEngineHoldsExactlyWhatTheRowsRecord) {
  auto first = Engine();
  std::vector<Reservation> rows;
  for (const auto& [vc, capacity] :
       std::vector<std::pair<std::string, Capacity>>{{"s", Shared(1700, 8000)},
                                                     {"i", Mig({{"3g.40gb", 1, ""}, {"1g.10gb", 1, ""}})},
                                                     {"d", Whole(Tier::kDedicated, "A100-80GB", 9)},
                                                     {"x", Whole(Tier::kExclusive, "T4", 1)}}) {
    auto placed = PlaceCapacity(*first, "acme", vc, capacity);
    ASSERT_TRUE(placed.ok()) << vc << ": " << placed.status().ToString();
    rows.push_back(placed->reservation);
  }
  auto rebuilt = Engine();
  for (const Reservation& r : rows) {
    auto held = HoldReservation(*rebuilt, r);
    ASSERT_TRUE(held.ok()) << held.status().ToString();
  }
  for (std::size_t n = 0; n < first->nodes().size(); ++n) {
    for (std::size_t g = 0; g < first->nodes()[n].gpus.size(); ++g) {
      EXPECT_EQ(rebuilt->Mode(n, g), first->Mode(n, g));
      EXPECT_EQ(rebuilt->FreeMilli(n, g), first->FreeMilli(n, g));
    }
  }
  EXPECT_EQ(rebuilt->allocations().size(), first->allocations().size());
  // A row set that double-books is refused as a whole.
  const std::size_t before = rebuilt->allocations().size();
  auto twice = HoldReservation(*rebuilt, rows[1]);
  ASSERT_FALSE(twice.ok());
  EXPECT_EQ(twice.status().code(), Code::kFailedPrecondition);
  EXPECT_NE(twice.status().message().find("reservation of acme/i"), std::string::npos);
  EXPECT_EQ(rebuilt->allocations().size(), before);
}

}  // namespace
}  // namespace septa::tenancy
