// The bounds of MIG-BENCH §5: B2's cutting-stock program and B3, the offline
// bound over a run's arrivals.
#include <gtest/gtest.h>

#include "gpu/mig_churn.h"
#include "tests/unit/gpu/mig_churn_fixtures.h"

namespace septa::gpu {
namespace {

using test::A100Nodes;
using test::Arrivals;

TEST(MigChurnBound, RepackCountsWholeGpusOverMaximalLayouts) {
  const GpuModel& a100 = *Catalog::Default().Find("A100-40GB");
  RepackProgram program(a100);
  auto gpus = [&](std::initializer_list<std::pair<int, int>> items) {
    std::array<int, kMigShapeCount> d = {};
    for (const auto& item : items) d[item.first] = item.second;
    return program.Gpus(d);
  };
  EXPECT_EQ(gpus({{k4g, 2}}), 2);
  EXPECT_EQ(gpus({{k4g, 1}, {k3g, 1}}), 1);
  EXPECT_EQ(gpus({{k3g, 2}}), 1);
  EXPECT_EQ(gpus({{k1g, 7}}), 1);
  EXPECT_EQ(gpus({{k1g, 8}}), 2);  // the LP relaxation says 8/7
  EXPECT_EQ(gpus({{k7g, 3}, {k2g, 3}}), 4);
  // Three 3g and three 2g: the LP mixes 3g+3g and 3g+2g+2g layouts for 2.25
  // GPUs, whole GPUs need 3.
  EXPECT_EQ(gpus({{k3g, 3}, {k2g, 3}}), 3);
}

// Fits takes shortcuts (the relaxation above the limit, its rounding up
// within it, branch and bound between): every demand of up to 3 instances per
// shape, against 1-5 GPUs, gets the integer program's answer.
TEST(MigChurnBound, RepackFitsIsTheIntegerProgramsAnswer) {
  RepackProgram program(*Catalog::Default().Find("A100-40GB"));
  std::array<int, kMigShapeCount> d = {};
  for (int code = 0; code < 4096; ++code) {  // base 4, a digit per shape
    for (int s = 0, rest = code; s < kMigShapeCount; ++s, rest /= 4) d[s] = rest % 4;
    const int optimum = program.Gpus(d);
    ASSERT_GE(optimum, code == 0 ? 0 : 1) << "demand code " << code;
    for (int limit = 1; limit <= 5; ++limit) {
      ASSERT_EQ(program.Fits(d, limit), optimum <= limit) << "demand code " << code << ", " << limit << " GPUs";
    }
  }
}

OfflineArrival At(double t, int shape, double lifetime_s, int gpus = 1) {
  ChurnPod pod;
  pod.shape = shape;
  pod.gpus = gpus;
  pod.lifetime_s = lifetime_s;
  return {.at_s = t, .pod = pod};
}

// One GPU: two 4g never share it (4g starts at slice 0 only), a 4g and a 3g do.
TEST(MigChurnBound, OfflineAdmitsWhatSomeLayoutHoldsAtEveryArrival) {
  const ChurnCluster gpu = A100Nodes(1, 1);
  const std::vector<OfflineArrival> arrivals = {At(0, k4g, 10), At(1, k4g, 10), At(2, k3g, 10)};
  auto bound = SolveOfflineBound(gpu, arrivals);
  ASSERT_TRUE(bound.ok()) << bound.status().ToString();
  EXPECT_NEAR(bound->slices, 7, 1e-9);  // one 4g and the 3g
  EXPECT_NEAR(bound->pods, 2, 1e-9);
  EXPECT_NEAR(bound->class_pods[1], 2, 1e-9);  // 3g-4g
}

// A pod holds its instance until its lifetime is over, and no longer.
TEST(MigChurnBound, OfflineFreesAPodsInstanceWhenItsLifetimeEnds) {
  const ChurnCluster gpu = A100Nodes(1, 1);
  auto admitted = [&](double first_lifetime_s) {
    return SolveOfflineBound(gpu, {At(0, k7g, first_lifetime_s), At(5, k7g, 10)})->pods;
  };
  EXPECT_NEAR(admitted(5), 2, 1e-9);  // ended as the second arrives
  EXPECT_NEAR(admitted(6), 1, 1e-9);
  // A 2-GPU pod needs two 7g at once, which one GPU never holds; the
  // relaxation admits half of it: an upper bound, not a tight one.
  EXPECT_NEAR(SolveOfflineBound(gpu, {At(0, k7g, 10, 2)})->pods, 0.5, 1e-9);
}

// B3 bounds every policy that gives a pod an instance of its shape (HAMi's
// undersized pods are outside it) on the same arrivals: they are the seed's
// alone, whatever the policy admits.
TEST(MigChurnBound, OfflineBoundsEveryPolicyOnTheSameArrivals) {
  const ChurnCluster cluster = A100Nodes(2);
  auto workload = SyntheticWorkload("uniform", 500, 7);
  ASSERT_TRUE(workload.ok());
  ChurnConfig config = Arrivals(300, false, 1.5);
  const std::vector<OfflineArrival> arrivals = ChurnArrivals(cluster, *workload, config);
  ASSERT_EQ(arrivals.size(), 300u);
  auto bound = SolveOfflineBound(cluster, arrivals);
  ASSERT_TRUE(bound.ok());
  double offered = 0;
  for (const OfflineArrival& a : arrivals) offered += a.pod.ComputeSlices();
  EXPECT_LT(bound->slices, offered);  // the load refuses some
  std::vector<std::unique_ptr<ChurnPolicy>> policies;
  policies.push_back(MakeStaticPolicy(SliceTimeShares(*workload)));
  policies.push_back(MakeDraPolicy(5));
  policies.push_back(MakeFgdMigPolicy(SliceTimeShares(*workload), 5));
  policies.push_back(MakeSeptaPolicy(SliceTimeShares(*workload), 120, 1000));
  policies.push_back(MakeGrmuPolicy(SliceTimeShares(*workload), 5));
  policies.push_back(MakeRepackBound());
  for (const auto& policy : policies) {
    const ChurnResult r = RunChurn(cluster, *workload, *policy, config);
    EXPECT_DOUBLE_EQ(r.offered_slices, offered) << policy->name();
    EXPECT_LE(r.accepted_slices, bound->slices + 1e-6) << policy->name();
    EXPECT_LE(r.accepted, bound->pods + 1e-6) << policy->name();
  }
}

}  // namespace
}  // namespace septa::gpu
