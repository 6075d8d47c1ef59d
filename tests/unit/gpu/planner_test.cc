#include "gpu/planner.h"
#include "tests/unit/gpu/h100.h"

#include <gtest/gtest.h>

#include <functional>
#include <optional>
#include <random>

namespace septa::gpu {
namespace {

using test::H100;
using test::P;

std::vector<int> Demand(std::initializer_list<std::pair<const char*, int>> items) {
  std::vector<int> d(H100().mig_profiles.size(), 0);
  for (auto [name, count] : items) d[P(name)] = count;
  return d;
}

PlannerGpu Candidate(const std::string& node, int index, MigLayout current = {}, std::vector<bool> running = {},
                     bool may_drain = false) {
  return PlannerGpu{node, index, std::move(current), std::move(running), may_drain};
}

TEST(Planner, PacksDemandOntoFewGpusWithoutStranding) {
  const std::vector<PlannerGpu> gpus = {Candidate("n1", 0), Candidate("n1", 1), Candidate("n2", 0)};
  auto plan = PlanMigLayouts(H100(), Demand({{"3g.40gb", 1}, {"4g.40gb", 1}, {"1g.10gb", 2}}), gpus);
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  EXPECT_EQ(plan->cost.unmet_slices, 0);
  // 4g+3g fill one GPU exactly; the two 1g strand 6 slices of a second one.
  EXPECT_EQ(plan->cost.stranded_slices, 6);
  EXPECT_EQ(plan->cost.reconfigured_gpus, 2);
  for (const GpuTarget& t : plan->gpus) EXPECT_TRUE(ValidateLayout(H100(), t.layout).ok());
  // Creation order: largest first.
  int with_instances = 0;
  for (const GpuTarget& t : plan->gpus) {
    with_instances += !t.layout.empty();
    for (std::size_t k = 1; k < t.layout.size(); ++k) {
      EXPECT_GE(H100().mig_profiles[t.layout[k - 1].profile].memory_slices,
                H100().mig_profiles[t.layout[k].profile].memory_slices);
    }
  }
  EXPECT_EQ(with_instances, 2);
  // Rendered: a named config per node, and the label value pointing at it.
  EXPECT_EQ(plan->node_mig_config.at("n1"), "septa-n1");
  ASSERT_TRUE(plan->config.configs.count("septa-n1"));
  const std::string yaml = RenderMigParted(plan->config);
  auto reparsed = ParseMigParted(yaml, "plan");
  ASSERT_TRUE(reparsed.ok()) << yaml;
  EXPECT_EQ(*reparsed, plan->config);
  EXPECT_NE(yaml.find("version: v1"), std::string::npos);
}

TEST(Planner, NeverTouchesARunningGpuUnlessDrainingIsAllowed) {
  const MigLayout busy = {{P("7g.80gb"), 0}};
  const std::vector<PlannerGpu> gpus = {Candidate("n1", 0, busy, {true})};
  auto plan = PlanMigLayouts(H100(), Demand({{"3g.40gb", 2}}), gpus);
  ASSERT_TRUE(plan.ok());
  EXPECT_FALSE(plan->gpus[0].reconfigure);
  EXPECT_EQ(plan->gpus[0].layout, busy);
  EXPECT_EQ(plan->cost.unmet_slices, 8);
  EXPECT_EQ(plan->unmet[P("3g.40gb")], 2);

  auto drained = PlanMigLayouts(H100(), Demand({{"3g.40gb", 2}}), {Candidate("n1", 0, busy, {true}, true)});
  ASSERT_TRUE(drained.ok());
  EXPECT_TRUE(drained->gpus[0].reconfigure);
  EXPECT_EQ(drained->cost.unmet_slices, 0);
}

TEST(Planner, FillsTheSlicesAReLayoutLeavesWhenAsked) {
  const std::vector<PlannerGpu> gpus = {Candidate("n1", 0)};
  auto bare = PlanMigLayouts(H100(), Demand({{"1g.10gb", 2}}), gpus);
  ASSERT_TRUE(bare.ok());
  EXPECT_EQ(LayoutToString(H100(), bare->gpus[0].layout), "1g.10gb@0 1g.10gb@1");
  auto filled = PlanMigLayouts(H100(), Demand({{"1g.10gb", 2}}), gpus, MigPlanOptions{.fill_free_slices = true});
  ASSERT_TRUE(filled.ok());
  // The largest sub-GPU instances beside the demanded 1g: a 4g where it may
  // start (slice 0 is taken: none), then a 3g at 4, then a 2g at 2.
  EXPECT_EQ(LayoutToString(H100(), filled->gpus[0].layout), "3g.40gb@4 2g.20gb@2 1g.10gb@0 1g.10gb@1");
  EXPECT_TRUE(ValidateLayout(H100(), filled->gpus[0].layout).ok());
  EXPECT_EQ(filled->cost, bare->cost);  // the cost counts demanded instances only
  // A GPU whose filled target is the layout it has is not reconfigured.
  const MigLayout has = filled->gpus[0].layout;
  auto again = PlanMigLayouts(H100(), Demand({{"1g.10gb", 2}}), {Candidate("n1", 0, has)},
                              MigPlanOptions{.fill_free_slices = true});
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE(again->gpus[0].reconfigure);
  EXPECT_EQ(again->gpus[0].layout, has);
}

TEST(Planner, KeepsALayoutThatAlreadyServes) {
  const MigLayout balanced = {{P("3g.40gb"), 0}, {P("2g.20gb"), 4}, {P("1g.10gb"), 6}};
  auto plan = PlanMigLayouts(H100(), Demand({{"3g.40gb", 1}, {"2g.20gb", 1}}),
                             {Candidate("n1", 0, balanced), Candidate("n1", 1)});
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->cost.reconfigured_gpus, 0);
  EXPECT_EQ(plan->cost.stranded_slices, 2);  // the 1g nobody asked for
}

TEST(Planner, RejectsBadInput) {
  EXPECT_FALSE(PlanMigLayouts(*Catalog::Default().Find("T4"), {}, {}).ok());
  EXPECT_FALSE(PlanMigLayouts(H100(), Demand({{"3g.40gb", -1}}), {}).ok());
  EXPECT_FALSE(PlanMigLayouts(H100(), {}, {Candidate("n", 0, {{P("3g.40gb"), 2}})}).ok());
}

// Every assignment of {keep, placeable counts} to every GPU.
PlanCost Exhaustive(const GpuModel& model, const std::vector<int>& demand, const std::vector<PlannerGpu>& gpus) {
  const std::vector<std::vector<int>> options = PlaceableCounts(model, demand);
  std::vector<std::vector<int>> counts(gpus.size());
  std::vector<bool> keep(gpus.size(), true);
  std::optional<PlanCost> best;
  std::function<void(std::size_t)> visit = [&](std::size_t i) {
    if (i == gpus.size()) {
      const PlanCost c = CostOfCounts(model, demand, gpus, counts, keep);
      if (!best || c < *best) best = c;
      return;
    }
    keep[i] = true;
    visit(i + 1);
    const bool busy = std::any_of(gpus[i].running.begin(), gpus[i].running.end(), [](bool r) { return r; });
    if (busy && !gpus[i].may_drain) return;
    keep[i] = false;
    for (const auto& option : options) {
      counts[i] = option;
      visit(i + 1);
    }
    keep[i] = true;
  };
  visit(0);
  return *best;
}

TEST(Planner, EqualsExhaustiveSearchOnSmallInstances) {
  const GpuModel& model = H100();
  const std::vector<MigLayout> maximal = MaximalLayouts(model);
  std::mt19937_64 rng(1234);
  const std::vector<int> demandable = {P("1g.10gb"), P("1g.20gb"), P("2g.20gb"),
                                       P("3g.40gb"), P("4g.40gb"), P("7g.80gb")};
  for (int round = 0; round < 150; ++round) {
    std::vector<int> demand(model.mig_profiles.size(), 0);
    for (int k = 0; k < 3; ++k) demand[demandable[rng() % demandable.size()]] += static_cast<int>(rng() % 3);
    std::vector<PlannerGpu> gpus;
    const int n = 1 + static_cast<int>(rng() % 4);
    for (int g = 0; g < n; ++g) {
      PlannerGpu gpu = Candidate("n" + std::to_string(g / 2), g % 2);
      if (rng() % 2) {
        gpu.current = maximal[rng() % maximal.size()];
        gpu.running.resize(gpu.current.size());
        for (std::size_t k = 0; k < gpu.running.size(); ++k) gpu.running[k] = rng() % 4 == 0;
        gpu.may_drain = rng() % 3 == 0;
      }
      gpus.push_back(std::move(gpu));
    }
    auto plan = PlanMigLayouts(model, demand, gpus);
    ASSERT_TRUE(plan.ok()) << plan.status().ToString();
    EXPECT_EQ(plan->cost, Exhaustive(model, demand, gpus)) << "round " << round;
    // The plan's own layouts realise the cost it claims.
    std::vector<std::vector<int>> counts;
    for (const GpuTarget& t : plan->gpus) {
      ASSERT_TRUE(ValidateLayout(model, t.layout).ok());
      std::vector<int> c(model.mig_profiles.size(), 0);
      for (const MigInstance& inst : t.layout) ++c[inst.profile];
      counts.push_back(c);
    }
    EXPECT_EQ(CostOfCounts(model, demand, gpus, counts, std::vector<bool>(gpus.size(), false)), plan->cost);
    for (std::size_t i = 0; i < gpus.size(); ++i) {
      const bool busy = std::any_of(gpus[i].running.begin(), gpus[i].running.end(), [](bool r) { return r; });
      if (busy && !gpus[i].may_drain) {
        EXPECT_FALSE(plan->gpus[i].reconfigure);
      }
    }
  }
}

}  // namespace
}  // namespace septa::gpu
