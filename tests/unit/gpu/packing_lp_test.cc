// The packing LP: known optima and prices, and on random instances the
// certificate of optimality (every configuration priced at most one GPU, and
// the prices of the demand add up to the optimum).
#include "gpu/packing_lp.h"

#include <gtest/gtest.h>

#include <functional>
#include <random>

namespace septa::gpu {
namespace {

PackingLpSolution Solve(const std::vector<PackingDemand>& demand) {
  Result<PackingLpSolution> r = SolvePackingLp(demand);
  EXPECT_TRUE(r.ok()) << r.status().message();
  return r.ok() ? *r : PackingLpSolution{};
}

TEST(PackingLp, FewestGpusOnKnownInstances) {
  EXPECT_DOUBLE_EQ(Solve({{500, 4}}).gpus, 2.0);
  EXPECT_DOUBLE_EQ(Solve({{650, 1}, {320, 1}, {470, 2}}).gpus, 2.0);
  EXPECT_DOUBLE_EQ(Solve({{700, 3}, {200, 1}}).gpus, 3.0);
  EXPECT_DOUBLE_EQ(Solve({{500, 0.3}}).gpus, 0.15);  // frequencies work as well as counts
  EXPECT_DOUBLE_EQ(Solve({}).gpus, 0.0);
}

TEST(PackingLp, PricesSayWhatEachSizeIsWorth) {
  // 810s outnumber the 160s that could share their GPU: an 810 costs a whole
  // GPU and a 160 rides in room that is left anyway.
  PackingLpSolution s = Solve({{810, 4}, {160, 1}});
  EXPECT_DOUBLE_EQ(s.gpus, 4.0);
  EXPECT_NEAR(s.prices[0], 1.0, 1e-9);
  EXPECT_NEAR(s.prices[1], 0.0, 1e-9);
  // Two 500s fill a GPU: half a GPU each.
  EXPECT_NEAR(Solve({{500, 4}}).prices[0], 0.5, 1e-9);
}

TEST(PackingLp, MaxPerGpuLimitsConfigurations) {
  EXPECT_DOUBLE_EQ(Solve({{250, 4, 0}}).gpus, 1.0);
  EXPECT_DOUBLE_EQ(Solve({{250, 4, 2}}).gpus, 2.0);
}

TEST(PackingLp, MostValuableFillIsTheBestPricedSetPerCapacity) {
  const std::vector<double> k = MostValuableFill({{470, 1}, {320, 1}}, {0.5, 1.0 / 3});
  ASSERT_EQ(k.size(), 1001u);
  EXPECT_DOUBLE_EQ(k[319], 0.0);
  EXPECT_DOUBLE_EQ(k[320], 1.0 / 3);
  EXPECT_DOUBLE_EQ(k[470], 0.5);
  EXPECT_DOUBLE_EQ(k[640], 2.0 / 3);  // two 320s beat one 470
  EXPECT_DOUBLE_EQ(k[1000], 1.0);     // three 320s, or two 470s
  // max_per_gpu bounds the copies: one 320 at most.
  EXPECT_DOUBLE_EQ(MostValuableFill({{320, 1, 1}}, {1.0 / 3})[1000], 1.0 / 3);
}

TEST(PackingLp, RefusesBadInput) {
  for (const auto& bad : std::vector<std::vector<PackingDemand>>{
           {{0, 1}}, {{1000, 1}}, {{300, -1}}, {{300, 1, -1}}, {{300, 1}, {300, 2}}}) {
    Result<PackingLpSolution> r = SolvePackingLp(bad);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), Code::kInvalidArgument) << r.status().message();
  }
}

TEST(PackingLp, SaysWhenColumnGenerationDidNotConverge) {
  // Two sizes that pair: the starting columns (each size alone) are not
  // optimal, so one round of pricing is not enough to prove optimality.
  Result<PackingLpSolution> r = SolvePackingLp({{600, 1}, {400, 1}}, 1);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Code::kFailedPrecondition);
  EXPECT_NE(r.status().message().find("did not converge in 1 rounds"), std::string::npos);
  EXPECT_TRUE(SolvePackingLp({{600, 1}, {400, 1}}, 2).ok());
}

// Every configuration of `sizes` fitting one GPU (counts per size).
void ForEachConfiguration(const std::vector<PackingDemand>& d, const std::function<void(const std::vector<int>&)>& f) {
  std::vector<int> counts(d.size(), 0);
  std::function<void(std::size_t, int)> visit = [&](std::size_t i, int gap) {
    if (i == d.size()) return f(counts);
    const int most = d[i].max_per_gpu > 0 ? d[i].max_per_gpu : 1000;
    for (int k = 0; k <= most && k * d[i].milli <= gap; ++k) {
      counts[i] = k;
      visit(i + 1, gap - k * d[i].milli);
    }
    counts[i] = 0;
  };
  visit(0, 1000);
}

TEST(PackingLp, RandomInstancesCarryAnOptimalityCertificate) {
  std::mt19937 rng(7);
  for (int instance = 0; instance < 200; ++instance) {
    std::vector<PackingDemand> demand;
    std::vector<int> sizes;
    const int n = std::uniform_int_distribution<int>(1, 6)(rng);
    while (static_cast<int>(sizes.size()) < n) {
      const int size = std::uniform_int_distribution<int>(1, 99)(rng) * 10;
      if (std::find(sizes.begin(), sizes.end(), size) != sizes.end()) continue;
      sizes.push_back(size);
      const int cap = std::uniform_int_distribution<int>(0, 3)(rng);  // 0: unlimited
      demand.push_back({size, std::uniform_real_distribution<double>(0, 50)(rng), cap});
    }
    const PackingLpSolution s = Solve(demand);
    double priced = 0;
    for (std::size_t i = 0; i < demand.size(); ++i) {
      EXPECT_GE(s.prices[i], 0.0);
      priced += s.prices[i] * demand[i].demand;
    }
    // Weak duality makes the priced demand a lower bound on any packing; the
    // optimum is a packing's value; equal, they certify each other.
    EXPECT_NEAR(priced, s.gpus, 1e-6 * std::max(1.0, s.gpus)) << "instance " << instance;
    ForEachConfiguration(demand, [&](const std::vector<int>& c) {
      double value = 0;
      for (std::size_t i = 0; i < c.size(); ++i) value += c[i] * s.prices[i];
      EXPECT_LE(value, 1.0 + 1e-6) << "instance " << instance;
    });
  }
}

}  // namespace
}  // namespace septa::gpu
