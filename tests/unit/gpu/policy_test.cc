// Each policy's choice on small hand-built clusters where the right answer is known.
#include <gtest/gtest.h>

#include <set>

#include "gpu/fragmentation.h"
#include "gpu/policy.h"
#include "gpu/policy_fgd.h"
#include "gpu/policy_septa.h"

namespace septa::gpu {
namespace {

NodeState MakeNode(int cpu, int mem, std::vector<int> gpu_free) {
  NodeState n;
  n.cpu_free = cpu;
  n.mem_free = mem;
  n.gpu_count = static_cast<std::uint8_t>(gpu_free.size());
  for (std::size_t g = 0; g < gpu_free.size(); ++g) n.gpu_free[g] = static_cast<std::int16_t>(gpu_free[g]);
  return n;
}

ClusterState Cluster(std::vector<NodeState> nodes) {
  ClusterState c;
  c.model_names = {"T4"};
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    c.names.push_back(std::string(1, static_cast<char>('a' + i)));
    NodeState cap = nodes[i];
    for (int g = 0; g < cap.gpu_count; ++g) cap.gpu_free[g] = kMilliPerGpu;
    c.capacity.push_back(cap);
    c.total_gpu_milli += cap.gpu_count * kMilliPerGpu;
  }
  c.nodes = std::move(nodes);
  return c;
}

PodShape Pod(int cpu, int num_gpu, int milli, int shape_id = 0) {
  PodShape p;
  p.cpu_milli = cpu;
  p.mem_mib = 1024;
  p.num_gpu = static_cast<std::int16_t>(num_gpu);
  p.gpu_milli = static_cast<std::int16_t>(milli);
  p.shape_id = shape_id;
  return p;
}

WorkloadModel OneClass(int cpu, int num_gpu, int milli) { return LearnWorkload({Pod(cpu, num_gpu, milli)}); }

GpuPick Choose(std::string_view policy, const ClusterState& c, const PodShape& pod, const WorkloadModel& w = {}) {
  return MakePolicy(policy, c, w, 42)->Choose(c, pod);
}

TEST(Policies, EveryPolicyRefusesWhenNothingFits) {
  const ClusterState c = Cluster({MakeNode(1000, 4096, {300}), MakeNode(64000, 512, {1000})});  // CPU, memory
  for (const std::string& name : PolicyNames()) {
    EXPECT_EQ(Choose(name, c, Pod(2000, 1, 500), OneClass(1000, 1, 500)).node, -1) << name;
    EXPECT_EQ(Choose(name, c, Pod(1000, 2, 1000), OneClass(1000, 1, 500)).node, -1) << name;
  }
}

TEST(Policies, EveryPolicyPicksTheOnlyFeasibleNodeAndAFittingGpu) {
  const ClusterState c = Cluster({MakeNode(8000, 4096, {200, 100}), MakeNode(8000, 4096, {100, 600, 700})});
  for (const std::string& name : PolicyNames()) {
    const GpuPick pick = Choose(name, c, Pod(1000, 1, 500), OneClass(1000, 1, 500));
    EXPECT_EQ(pick.node, 1) << name;
    EXPECT_TRUE(pick.gpu_mask == 0b010 || pick.gpu_mask == 0b100) << name;
  }
}

TEST(BestFit, LeastLeftoverAndTiesToTheSmallestName) {
  const ClusterState c = Cluster({MakeNode(64000, 65536, {1000, 1000}), MakeNode(16000, 65536, {1000, 1000}),
                                  MakeNode(16000, 65536, {1000, 1000})});
  // Less CPU left on b and c; b and c tie, b has the smaller name.
  EXPECT_EQ(Choose("bestfit", c, Pod(4000, 1, 1000)).node, 1);
  // Tightest GPU on the node: 400 free beats 1000 free.
  const ClusterState d = Cluster({MakeNode(16000, 65536, {1000, 400})});
  EXPECT_EQ(Choose("bestfit", d, Pod(1000, 1, 300)).gpu_mask, 0b10);
}

TEST(Random, OnlyFeasibleNodesAndDeterministicBySeed) {
  const ClusterState c = Cluster({MakeNode(8000, 4096, {1000}), MakeNode(100, 4096, {1000}),
                                  MakeNode(8000, 4096, {1000}), MakeNode(8000, 4096, {1000})});
  auto a = MakePolicy("random", c, {}, 7), b = MakePolicy("random", c, {}, 7);
  std::set<int> chosen;
  for (int i = 0; i < 200; ++i) {
    const GpuPick pick = a->Choose(c, Pod(1000, 1, 1000));
    EXPECT_EQ(pick.node, b->Choose(c, Pod(1000, 1, 1000)).node);
    chosen.insert(pick.node);
  }
  EXPECT_EQ(chosen, (std::set<int>{0, 2, 3}));
}

TEST(GpuPacking, FractionJoinsAPartlyUsedGpu) {
  const ClusterState c = Cluster({MakeNode(16000, 65536, {1000, 1000}), MakeNode(16000, 65536, {1000, 600})});
  const GpuPick pick = Choose("gpupacking", c, Pod(1000, 1, 300));
  EXPECT_EQ(pick.node, 1);
  EXPECT_EQ(pick.gpu_mask, 0b10);
}

TEST(GpuClustering, WholeGpuPodsAvoidNodesRunningFractions) {
  const ClusterState c = Cluster({MakeNode(16000, 65536, {1000, 500}), MakeNode(16000, 65536, {1000, 0})});
  EXPECT_EQ(Choose("gpuclustering", c, Pod(1000, 1, 1000)).node, 1);
  EXPECT_EQ(Choose("gpuclustering", c, Pod(1000, 1, 200)).node, 0);
}

TEST(DotProduct, AlignsDemandWithFreeResources) {
  // A GPU-heavy pod goes where GPUs are free relative to capacity, not where only CPU is.
  ClusterState c = Cluster({MakeNode(64000, 65536, {1000, 1000}), MakeNode(64000, 65536, {1000, 1000})});
  c.nodes[0].gpu_free[1] = 0;
  EXPECT_EQ(Choose("dotproduct", c, Pod(1000, 1, 1000)).node, 1);
}

TEST(Fgd, FragmentationMeasureFollowsTheDefinition) {
  const WorkloadModel w = OneClass(1000, 1, 600);
  ASSERT_EQ(w.classes.size(), 1u);
  EXPECT_DOUBLE_EQ(w.classes[0].frequency, 1.0);
  EXPECT_EQ(NodeFragmentation(MakeNode(8000, 0, {1000, 700, 400}), w), 400);  // only the GPU below 600
  EXPECT_EQ(NodeFragmentation(MakeNode(500, 0, {1000, 700, 400}), w), 2100);  // no CPU: all idle
  const WorkloadModel cpu_only = LearnWorkload({Pod(1000, 0, 0)});
  EXPECT_EQ(NodeFragmentation(MakeNode(8000, 0, {1000, 300}), cpu_only), 1300);
  EXPECT_EQ(FgdScore(1000, 1000), 50);
  EXPECT_EQ(FgdScore(0, 10000), 0);
}

TEST(Fgd, PlacesWhereFragmentationGrowsLeast) {
  // Class needs 600: a 300 pod on the 700-free GPU of a would strand 400; on b it leaves 700, still usable.
  const ClusterState c = Cluster({MakeNode(8000, 65536, {700}), MakeNode(8000, 65536, {1000})});
  const WorkloadModel w = OneClass(1000, 1, 600);
  EXPECT_EQ(Choose("fgd", c, Pod(1000, 1, 300), w).node, 1);
  // A 100 pod keeps both nodes usable for the class (600 and 900 left): a tie, the smallest name wins.
  EXPECT_EQ(Choose("fgd", c, Pod(1000, 1, 100), w).node, 0);
}

TEST(Septa, CpuOnlyPodsAvoidNodesWhereCpuIsScarceForGpuWork) {
  // Both nodes have two free GPUs; the workload needs 12 cores per GPU. On a the
  // CPU-only pod would leave CPU for one GPU pod only; FGD cannot see it and
  // takes a (smallest name), Septa takes b.
  const ClusterState c = Cluster({MakeNode(24000, 65536, {1000, 1000}), MakeNode(200000, 65536, {1000, 1000})});
  const WorkloadModel w = OneClass(12000, 1, 1000);
  EXPECT_EQ(Choose("fgd", c, Pod(12000, 0, 0), w).node, 0);
  EXPECT_EQ(Choose("septa", c, Pod(12000, 0, 0), w).node, 1);
}

TEST(Septa, CountsEveryInstanceAGpuCanStillHold) {
  const ClusterState c = Cluster({MakeNode(64000, 65536, {1000, 1000})});
  SeptaPolicy septa(c, OneClass(1000, 1, 470));
  // 1000 free holds two 470s (60 wasted); 470 free holds one; 400 free holds none.
  EXPECT_DOUBLE_EQ(septa.Waste(MakeNode(64000, 0, {1000})), 60);
  EXPECT_DOUBLE_EQ(septa.Waste(MakeNode(64000, 0, {470})), 0);
  EXPECT_DOUBLE_EQ(septa.Waste(MakeNode(64000, 0, {400})), 400);
  EXPECT_DOUBLE_EQ(septa.Waste(MakeNode(1500, 0, {1000})), 530);  // CPU for one instance only
}

TEST(Septa, PacksWhenWasteDoesNotDecide) {
  // Whole-GPU workload, whole-GPU pod: waste is the same everywhere; the fuller node wins.
  const ClusterState c =
      Cluster({MakeNode(64000, 65536, {1000, 1000, 1000, 1000}), MakeNode(64000, 65536, {0, 0, 1000, 1000})});
  const GpuPick pick = Choose("septa", c, Pod(1000, 1, 1000), OneClass(1000, 1, 1000));
  EXPECT_EQ(pick.node, 1);
  EXPECT_EQ(pick.gpu_mask, 0b100);
}

TEST(Septa, PricedRemainderIsWhatThePackingLpLeavesOfAGpu) {
  const ClusterState c = Cluster({MakeNode(64000, 65536, {1000})});
  // Only 470s: two fill a GPU, so each is worth half a GPU. A free GPU is worth
  // a whole one (remainder 0), 530 free half (30 over), 470 free half (30
  // under: the pod that fills it is worth more than it asks), 400 nothing.
  const SeptaPolicy one(c, OneClass(1000, 1, 470));
  ASSERT_TRUE(one.lp_status().ok());
  EXPECT_NEAR(one.GpuRemainder(0, 1000), 0, 1e-3);
  EXPECT_NEAR(one.GpuRemainder(0, 530), 30, 1e-3);
  EXPECT_NEAR(one.GpuRemainder(0, 470), -30, 1e-3);
  EXPECT_NEAR(one.GpuRemainder(0, 400), 400, 1e-3);
  // Twice as many 300s as 700s: the best packing is 700+300 and 300+300+300,
  // so a 300 is worth a third of a GPU and a 700 two thirds. 700 free is worth
  // max(one 700, two 300s) = 2/3; 400 free one 300.
  const SeptaPolicy two(c, LearnWorkload({Pod(1000, 1, 300), Pod(1000, 1, 300), Pod(1000, 1, 700)}));
  EXPECT_NEAR(two.GpuRemainder(0, 1000), 0, 1e-3);
  EXPECT_NEAR(two.GpuRemainder(0, 700), 700 - 2000.0 / 3, 1e-3);
  EXPECT_NEAR(two.GpuRemainder(0, 400), 400 - 1000.0 / 3, 1e-3);
  EXPECT_NEAR(two.GpuRemainder(0, 299), 299, 1e-3);
}

TEST(Septa, FractionsGoWhereTheBestPackingOfTheMixPutsThem) {
  // The mix: four 810s per 160, and 650s, 470s (twice) and 320s. The 810s
  // leave more 190-milli gaps than there are 160s to fill them, so in the
  // best packing a 160 is worth nothing and a GPU with 210 free is worth
  // nothing either. A 320 arrives: beside a 470 (a, 530 free) it would leave
  // 210 for good; on a free GPU (b) it leaves 680 for a 650, as the best
  // packing (650+320, 470+470, 810 alone) has it. An expected fill that lets
  // any fitting pod fill a gap counts the 210 as mostly filled by a 160 and,
  // with packing as the tie-break, takes a.
  const ClusterState c = Cluster({MakeNode(64000, 65536, {530}), MakeNode(64000, 65536, {1000})});
  std::vector<PodShape> trace(4, Pod(1000, 1, 810));
  for (int milli : {160, 650, 470, 470, 320}) trace.push_back(Pod(1000, 1, milli));
  const WorkloadModel w = LearnWorkload(trace);
  EXPECT_EQ(Choose("septa", c, Pod(1000, 1, 320), w).node, 1);
  // A 470 does go beside the 470: 470+470 is in the best packing.
  EXPECT_EQ(Choose("septa", c, Pod(1000, 1, 470), w).node, 0);
}

TEST(Septa, LeavesRemaindersTheWorkloadCanFill) {
  // 200s and 300s equally likely, a 200 arrives. On a (300 free) it leaves 100
  // that nothing can use; on b (400 free) it leaves 200 that the next 200
  // fills exactly. Waste grows by the same tenth of a GPU on both, so packing
  // alone would take a; the priced remainder sees the stranded 100 and takes b.
  const ClusterState c = Cluster({MakeNode(64000, 65536, {300}), MakeNode(64000, 65536, {400})});
  const WorkloadModel w = LearnWorkload({Pod(1000, 1, 200), Pod(1000, 1, 300)});
  EXPECT_EQ(Choose("septa", c, Pod(1000, 1, 200), w).node, 1);
}

TEST(Septa, RemainderCountsTheCpuTheExpectedFillNeeds) {
  // Whole-GPU pods of 12 cores: a node with two free GPUs and 24 cores can
  // fill both (remainder 0); with 12 cores, one (remainder 1000); with none,
  // nothing (remainder 2000).
  const ClusterState c = Cluster({MakeNode(64000, 65536, {1000, 1000})});
  const SeptaPolicy septa(c, LearnWorkload({Pod(12000, 1, 1000)}));
  EXPECT_NEAR(septa.Remainder(MakeNode(24000, 65536, {1000, 1000})), 0, 1e-6);
  EXPECT_NEAR(septa.Remainder(MakeNode(12000, 65536, {1000, 1000})), 1000, 1e-6);
  EXPECT_NEAR(septa.Remainder(MakeNode(0, 65536, {1000, 1000})), 2000, 1e-6);
}

TEST(ScoringPolicy, CacheIsDroppedWhenANodeChanges) {
  ClusterState c = Cluster({MakeNode(64000, 65536, {1000, 1000}), MakeNode(64000, 65536, {1000, 1000})});
  auto policy = MakePolicy("bestfit", c, {}, 0);
  EXPECT_EQ(policy->Choose(c, Pod(1000, 1, 1000)).node, 0);
  c.nodes[1].gpu_free[0] = 0;  // b is now fuller: best fit must notice
  policy->NodeChanged(1);
  EXPECT_EQ(policy->Choose(c, Pod(1000, 1, 1000)).node, 1);
}

}  // namespace
}  // namespace septa::gpu
