#include "gpu/mig_churn.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "tests/unit/gpu/mig_churn_fixtures.h"

namespace septa::gpu {
namespace {

using test::A100Nodes;
using test::Arrivals;
using test::PodsOf;

std::array<double, kMigShapeCount> AllOf(int shape) {
  std::array<double, kMigShapeCount> shares = {};
  shares[shape] = 1;
  return shares;
}

TEST(MigChurn, MapsGpuMilliToTheSmallestCoveringShape) {
  EXPECT_EQ(ShapeForMilli(125), k1g);
  EXPECT_EQ(ShapeForMilli(140), k1gDoubleMemory);  // <= 1/7 compute, <= 2/8 memory
  EXPECT_EQ(ShapeForMilli(250), k2g);
  EXPECT_EQ(ShapeForMilli(320), k3g);
  EXPECT_EQ(ShapeForMilli(470), k4g);
  EXPECT_EQ(ShapeForMilli(810), k7g);
}

TEST(MigChurn, ParsesTraceWithSpecTableAndLifetimes) {
  const std::string text =
      "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\n"
      "a,1,1,1,470,V100M32,LS,Running,100,700,100\n"
      "b,1,1,0,0,,LS,Running,0,10,0\n"
      "c,1,1,2,1000,G2|G3,LS,Running,0,30,0\n";
  auto pods = ParseChurnTrace(text, "t.csv", MixModelNames());
  ASSERT_TRUE(pods.ok()) << pods.status().ToString();
  ASSERT_EQ(pods->size(), 2u);                // the CPU-only pod is dropped
  EXPECT_EQ((*pods)[0].model_mask, 1u << 1);  // V100M32 -> A100-80GB
  EXPECT_EQ((*pods)[0].lifetime_s, 600);
  EXPECT_EQ((*pods)[1].model_mask, (1u << 2) | (1u << 3));
  const std::vector<ChurnPod> w = ChurnWorkloadM1(*pods, 60, 500);
  EXPECT_EQ(w[0].shape, k4g);
  EXPECT_EQ(w[0].lifetime_s, 500);  // capped
  EXPECT_EQ(w[1].shape, k7g);
  EXPECT_EQ(w[1].gpus, 2);
  EXPECT_EQ(w[1].lifetime_s, 60);  // floored
  EXPECT_FALSE(ParseChurnTrace("name,x\n", "t.csv", MixModelNames()).ok());
}

TEST(MigChurn, SyntheticMixesFollowTheirWeights) {
  auto pods = SyntheticWorkload("small-heavy", 20000, 7);
  ASSERT_TRUE(pods.ok());
  int ones = 0;
  double lifetime = 0;
  for (const ChurnPod& p : *pods) {
    ones += p.shape == k1g;
    lifetime += p.lifetime_s / 20000.0;
  }
  EXPECT_NEAR(ones / 20000.0, 0.50, 0.02);
  EXPECT_NEAR(lifetime, 3600, 150);
  EXPECT_FALSE(SyntheticWorkload("heavy", 10, 7).ok());
}

// A hand-checkable cluster: 20 4g pods that never leave, on 8 A100-40GB GPUs.
TEST(MigChurn, EachPolicyAcceptsWhatItsLayoutsHold) {
  const ChurnCluster cluster = A100Nodes(1);
  const std::vector<ChurnPod> pods = PodsOf(k4g, 1e9);
  auto accepted = [&](ChurnPolicy& policy) { return RunChurn(cluster, pods, policy, Arrivals(20)).accepted; };
  // static sized for 4g pods: every GPU 4g+3g, one 4g pod each.
  EXPECT_EQ(accepted(*MakeStaticPolicy(AllOf(k4g))), 8);
  // HAMi matches memory only: a 4g pod (4 memory slices) gets a 3g.20gb of the 3g×2 template.
  auto hami = MakeHamiTemplatesPolicy(5);
  const ChurnResult h = RunChurn(cluster, pods, *hami, Arrivals(20));
  EXPECT_EQ(h.accepted, 16);
  EXPECT_EQ(h.undersized, 16);
  // nos starts every GPU as one 7g and plans only for pending pods (none in loss mode).
  EXPECT_EQ(accepted(*MakeNosPolicy(5, 30, false)), 0);
  // Septa's planner lays out 4g+3g for a 4g mix; a 3g cannot hold a 4g pod.
  EXPECT_EQ(accepted(*MakeSeptaPolicy(AllOf(k4g), 120, 2)), 8);
  // The fluid bound: 56 compute slices hold 14 pods of 4.
  EXPECT_EQ(accepted(*MakeFluidBound()), 14);
  // Free repack: two 4g never share a GPU (4g starts at slice 0 only).
  EXPECT_EQ(accepted(*MakeRepackBound()), 8);
}

// W0: 4g pods that never leave, on 8 A100s laid out 4g+3g: 14 pods offer
// the 56 slices, 19 offer 130 %; one 4g per GPU is accepted either way.
TEST(MigChurn, FillAllocatesWhatTheLayoutsHoldAtBothCuts) {
  const ChurnCluster cluster = A100Nodes(1);
  auto fill = RunFill(
      cluster, PodsOf(k4g, 60), [] { return MakeStaticPolicy(AllOf(k4g)); }, 42);
  ASSERT_TRUE(fill.ok()) << fill.status().ToString();
  EXPECT_EQ(fill->arrivals_100, 14);
  EXPECT_EQ(fill->arrivals_130, 19);  // 19 × 4 >= 1.3 × 56 = 72.8
  EXPECT_NEAR(fill->allocated_100, 32.0 / 56, 1e-12);
  EXPECT_NEAR(fill->allocated_130, 32.0 / 56, 1e-12);
  // The pods never leave within the fill, whatever their lifetime: the fluid
  // bound takes 14 of them, all 56 slices, at the first cut and no more after.
  auto fluid = RunFill(
      cluster, PodsOf(k4g, 60), [] { return MakeFluidBound(); }, 42);
  ASSERT_TRUE(fluid.ok());
  EXPECT_NEAR(fluid->allocated_100, 1.0, 1e-12);
  EXPECT_NEAR(fluid->allocated_130, 1.0, 1e-12);
  EXPECT_FALSE(RunFill(
                   cluster, {}, [] { return MakeFluidBound(); }, 42)
                   .ok());
}

// W0 has no clock: arrivals are spaced so that every re-layout (a 120 s node
// pause here) is over before the next. Septa lays out 7g GPUs and re-lays
// each out for the 3g pods: two per GPU.
TEST(MigChurn, FillLetsEveryRelayoutFinishBeforeTheNextArrival) {
  auto fill = RunFill(
      A100Nodes(1), PodsOf(k3g, 60), [] { return MakeSeptaPolicy(AllOf(k7g), 120, 1e9); }, 42);
  ASSERT_TRUE(fill.ok());
  EXPECT_NEAR(fill->allocated_130, 16 * 3 / 56.0, 1e-12);
}

// W2: the trace's order and gaps (10, 20, 40 s), compressed so the mean gap
// is 1 / rate, from a seeded start, and round again after the last pod.
TEST(MigChurn, ReplayKeepsTheTracesOrderAndGaps) {
  const std::array<double, 4> created = {100, 110, 130, 170};
  std::vector<ChurnPod> trace;
  for (double at : {created[2], created[0], created[3], created[1]}) {  // any order in the file
    trace.push_back(PodsOf(k1g, 60)[0]);
    trace.back().created_s = at;
  }
  ChurnConfig config = Arrivals(9, false, 1);
  config.replay = true;
  const std::vector<OfflineArrival> arrivals = ChurnArrivals(A100Nodes(1), trace, config);
  ASSERT_EQ(arrivals.size(), 9u);
  const double rate = 56.0 / 60;                  // load 1 × 56 slices / (1 slice × 60 s)
  const double scale = 3 / (rate * (170 - 100));  // 3 gaps over the 70 s span
  for (std::size_t k = 1; k < arrivals.size(); ++k) {
    const auto at = [&](std::size_t i) {
      return std::find(created.begin(), created.end(), arrivals[i].pod.created_s) - created.begin();
    };
    ASSERT_EQ(at(k), (at(k - 1) + 1) % 4) << "arrival " << k << " out of the trace's order";
    const double gap = arrivals[k].at_s - arrivals[k - 1].at_s;
    const double expected = at(k) == 0 ? 1 / rate : (created[at(k)] - created[at(k) - 1]) * scale;
    EXPECT_NEAR(gap, expected, 1e-9) << "arrival " << k;
  }
  // The seed picks the start: seeds 42-49 do not all start at one pod.
  std::set<double> starts;
  for (config.seed = 42; config.seed < 50; ++config.seed) {
    starts.insert(ChurnArrivals(A100Nodes(1), trace, config)[0].pod.created_s);
  }
  EXPECT_GT(starts.size(), 1u);
}

TEST(MigChurn, SeptaRelayoutPausesTheNodeAndStartsThePodAfterIt) {
  const ChurnCluster cluster = A100Nodes(1);
  // Laid out for 7g pods; a 3g pod needs a re-layout (no 7g is given to a 3g pod).
  auto septa = MakeSeptaPolicy(AllOf(k7g), 120, 1000);
  const ChurnResult r = RunChurn(cluster, PodsOf(k3g, 1e9), *septa, Arrivals(1, true));
  EXPECT_EQ(r.accepted, 1);
  EXPECT_EQ(r.node_pauses, 1);
  EXPECT_GE(r.relayouts, 1);
  ASSERT_EQ(r.waits_s.size(), 1u);
  EXPECT_DOUBLE_EQ(r.waits_s[0], 120);  // bound at once, runs once mig-manager is done
  // Without a pause budget the pod is refused.
  auto capped = MakeSeptaPolicy(AllOf(k7g), 120, 0);
  EXPECT_EQ(RunChurn(cluster, PodsOf(k3g, 1e9), *capped, Arrivals(1)).accepted, 0);
}

// Covering a pod with a larger free instance is free only while nobody asks
// for that instance's shape. Two nodes laid out 4g+3g per GPU; 4g pods may
// run on the A100-80GB node only, 1g pods anywhere; nothing leaves, no
// re-layouts. 1g pods cover onto the sixteen 3g instances; once a 4g pod has
// been refused (its node full), the A100-40GB node's free 4g instances are
// kept from them.
TEST(MigChurn, SeptaCoversWithAFreeInstanceOnlyWhileItsShapeIsNotInDemand) {
  ChurnCluster cluster;
  cluster.models = {Catalog::Default().Find("A100-40GB"), Catalog::Default().Find("A100-80GB")};
  cluster.node_model = {0, 1};
  std::vector<ChurnPod> pods = PodsOf(k4g, 1e9);
  pods[0].model_mask = 1u << 1;
  pods.push_back(PodsOf(k1g, 1e9)[0]);
  ChurnConfig c = Arrivals(200);
  c.load = 1e9;  // arrivals microseconds apart: every refusal is recent
  auto septa = MakeSeptaPolicy(AllOf(k4g), 120, 0);
  const ChurnResult r = RunChurn(cluster, pods, *septa, c);
  EXPECT_EQ(r.class_accepted[1], 8);   // the A100-80GB node's 4g instances
  EXPECT_EQ(r.class_accepted[0], 16);  // the 3g instances, not the A100-40GB node's free 4g
  // Without demand for 4g, the 1g pods take those too.
  const ChurnResult alone = RunChurn(cluster, PodsOf(k1g, 1e9), *MakeSeptaPolicy(AllOf(k4g), 120, 0), c);
  EXPECT_EQ(alone.accepted, 32);
}

// A policy that always re-lays out GPU 0 to one 7g and binds the pod there.
class GreedyRelayout : public ChurnPolicy {
 public:
  std::string name() const override { return "greedy"; }
  std::optional<ChurnDecision> Place(const ChurnState& state, const ChurnPod& /*pod*/, bool /*may*/) override {
    const GpuModel& m = state.ModelOf(0);
    std::vector<int> counts(m.mig_profiles.size(), 0);
    counts[state.ProfileOf(0, k7g)] = 1;
    ChurnDecision d = ChurnDecision::At({ChurnSlot{0, 0}});
    d.relayouts.push_back(ChurnRelayout{0, PlaceCounts(m, counts).value()});
    return d;
  }
};

TEST(MigChurn, ReLayoutOnlyOnAnIdleGpu) {
  GreedyRelayout policy;
  const ChurnResult r = RunChurn(A100Nodes(1), PodsOf(k7g, 1e9), policy, Arrivals(3));
  EXPECT_EQ(r.accepted, 1);   // GPU 0 runs the first pod: the next re-layouts are refused
  EXPECT_EQ(r.relayouts, 1);  // and not counted
  EXPECT_EQ(r.drains, 0);
}

// R-GI: each pod gets a new 1g instance created on GPU 0 beside the running
// ones (or, with `drop_used`, a change that would destroy a running instance).
class PerInstance : public ChurnPolicy {
 public:
  explicit PerInstance(bool drop_used) : drop_used_(drop_used) {}
  std::string name() const override { return "per-instance"; }
  MigLayout InitialLayout(const ChurnState& /*state*/, int /*gpu*/) override { return {}; }
  RelayoutCost Cost() const override { return {0, 0, 5}; }
  std::optional<ChurnDecision> Place(const ChurnState& state, const ChurnPod& /*pod*/, bool /*may*/) override {
    const GpuModel& m = state.ModelOf(0);
    const int p = state.ProfileOf(0, k1g);
    MigLayout layout;
    for (const ChurnInstance& inst : state.gpus()[0].instances) layout.push_back(MigInstance{inst.profile, inst.start});
    if (drop_used_ && !layout.empty()) layout.erase(layout.begin());
    const std::vector<int> starts = FreePlacements(m, layout, p);
    if (starts.empty()) return std::nullopt;
    layout.push_back(MigInstance{p, starts.front()});
    ChurnDecision d = ChurnDecision::At({ChurnSlot{0, static_cast<int>(layout.size()) - 1}});
    d.relayouts.push_back(ChurnRelayout{0, layout, true});
    return d;
  }

 private:
  bool drop_used_ = false;
};

TEST(MigChurn, PerInstanceChangesCreateBesideRunningInstancesOnly) {
  PerInstance policy(false);
  const ChurnResult r = RunChurn(A100Nodes(1), PodsOf(k1g, 1e9), policy, Arrivals(9));
  EXPECT_EQ(r.accepted, 7);  // seven 1g instances on GPU 0, each created beside the running ones
  EXPECT_EQ(r.relayouts, 7);
  EXPECT_EQ(r.gi_changes, 7);  // created, none destroyed
  EXPECT_EQ(r.node_pauses, 0);
  for (double w : r.waits_s) EXPECT_DOUBLE_EQ(w, 5);  // each runs once its instance exists
  // A change that would destroy a running instance is refused whole.
  PerInstance dropping(true);
  const ChurnResult refused = RunChurn(A100Nodes(1), PodsOf(k1g, 1e9), dropping, Arrivals(3));
  EXPECT_EQ(refused.accepted, 1);
  EXPECT_EQ(refused.relayouts, 1);
}

// Every pod after the first drains the pod on GPU 0's 7g instance and takes it.
class Evicting : public ChurnPolicy {
 public:
  std::string name() const override { return "evicting"; }
  std::optional<ChurnDecision> Place(const ChurnState& state, const ChurnPod& /*pod*/, bool /*may*/) override {
    ChurnDecision d = ChurnDecision::At({ChurnSlot{0, 0}});
    const int running = state.gpus()[0].instances[0].pod;
    if (running >= 0) d.drains.push_back(running);
    return d;
  }
  MigLayout InitialLayout(const ChurnState& state, int gpu) override {
    std::vector<int> counts(state.ModelOf(gpu).mig_profiles.size(), 0);
    counts[state.ProfileOf(0, k7g)] = 1;
    return PlaceCounts(state.ModelOf(gpu), counts).value();
  }
};

TEST(MigChurn, ADrainedPodLosesItsWorkWaitsAgainAndIsDroppedIfNeverPlaced) {
  // Queue mode: the first pod is drained by the second and tried again at
  // once, which drains the second; that one waits, nothing departs before
  // its wait runs out, so it is dropped and no longer counts as accepted.
  Evicting policy;
  const ChurnResult r = RunChurn(A100Nodes(1), PodsOf(k7g, 1e9), policy, Arrivals(2, true));
  EXPECT_EQ(r.drains, 2);
  EXPECT_GT(r.lost_gpu_hours, 0);  // it ran from its arrival to the second's
  EXPECT_EQ(r.dropped, 1);
  EXPECT_EQ(r.accepted, 1);
  // Loss mode: the drained pod is placed again at once, where it can be, else dropped.
  const ChurnResult loss = RunChurn(A100Nodes(1), PodsOf(k7g, 1e9), policy, Arrivals(3));
  EXPECT_EQ(loss.drains, 2);
  EXPECT_EQ(loss.dropped, 2);  // its only instance went to the newcomer
  EXPECT_EQ(loss.accepted, 1);
}

// nos itself (R-GI) also re-plans the free devices of GPUs that run pods;
// its R-GPU variant waits for a GPU to fall idle. Pods of 4g and 1g that
// never leave: the first batch lays GPUs out for whichever shapes wait, and
// only R-GI turns the free remainder of a GPU running a 4g into 1g devices.
TEST(MigChurn, NosPerInstanceReplansFreeDevicesBesideRunningPods) {
  std::vector<ChurnPod> pods = PodsOf(k4g, 1e9);
  pods.push_back(PodsOf(k1g, 1e9)[0]);
  auto run = [&](bool per_instance) {
    auto nos = MakeNosPolicy(5, 30, per_instance);
    return RunChurn(A100Nodes(1), pods, *nos, Arrivals(120, true));
  };
  const ChurnResult gpu = run(false), gi = run(true);
  // R-GI fills the node: every GPU one 4g and three 1g (7 compute slices).
  EXPECT_EQ(gi.class_accepted[1], 8);
  EXPECT_EQ(gi.class_accepted[0], 24);
  // R-GPU: the GPUs laid out for 4g keep their free 3g, which no pod here uses.
  EXPECT_EQ(gpu.class_accepted[1], 8);
  EXPECT_LT(gpu.class_accepted[0], 8);
}

TEST(MigChurn, MixClustersHaveMigBenchsNodeCounts) {
  auto count = [](const ChurnCluster& c) {
    std::array<int, 4> nodes = {};
    for (int m : c.node_model) ++nodes[m];
    return nodes;
  };
  auto mix1280 = MixCluster(Catalog::Default(), 5);
  ASSERT_TRUE(mix1280.ok());
  EXPECT_EQ(count(*mix1280), (std::array<int, 4>{40, 40, 60, 20}));
  auto mix6208 = Mix6208Cluster(Catalog::Default());
  ASSERT_TRUE(mix6208.ok());
  EXPECT_EQ(count(*mix6208), (std::array<int, 4>{194, 194, 291, 97}));
  EXPECT_EQ(mix6208->node_model.size() * mix6208->gpus_per_node, 6208u);
  EXPECT_FALSE(MixCluster(Catalog::Default(), 0).ok());
}

TEST(MigChurn, SameSeedSameRunOtherSeedOtherRun) {
  auto cluster = MixCluster(Catalog::Default(), 1);
  ASSERT_TRUE(cluster.ok());
  std::vector<ChurnPod> pods;
  for (int s = 0; s < kMigShapeCount; ++s) {
    ChurnPod pod;
    pod.shape = s;
    pod.lifetime_s = 600.0 * (s + 1);
    pods.push_back(pod);
  }
  pods.push_back(PodsOf(k7g, 3000, 4)[0]);
  ChurnConfig c;
  c.warmup = 200;
  c.measured = 1000;
  c.load = 1.3;
  auto run = [&](std::uint64_t seed) {
    c.seed = seed;
    auto policy = MakeSeptaPolicy(SliceTimeShares(pods), 120, 2);
    return RunChurn(*cluster, pods, *policy, c);
  };
  const ChurnResult a = run(42), b = run(42), other = run(43);
  EXPECT_EQ(a.arrivals, 1000);
  EXPECT_EQ(a.accepted, b.accepted);
  EXPECT_EQ(a.relayouts, b.relayouts);
  EXPECT_EQ(a.waits_s, b.waits_s);
  EXPECT_NE(a.waits_s, other.waits_s);
}

}  // namespace
}  // namespace septa::gpu
