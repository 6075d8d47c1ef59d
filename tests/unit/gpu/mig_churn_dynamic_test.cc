// The per-instance baselines of gpu/mig_churn_dynamic.cc: HAMi v2.10's dynamic
// MIG (P2) and NVIDIA's DRA driver DynamicMIG (P4), on hand-checkable clusters.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <memory>

#include "gpu/mig_churn.h"
#include "tests/unit/gpu/mig_churn_fixtures.h"

namespace septa::gpu {
namespace {

using test::A100Nodes;
using test::Arrivals;
using test::PodsOf;

// One instance a decision gave the pod: GPU, profile name, start.
struct Given {
  int gpu = 0;
  std::string profile;
  int start = 0;
};

// Wraps a policy: optionally rewrites the shape it is asked for (`script`:
// call index and time -> shape, -1 = refuse), records what each accepted
// decision gave, and counts decisions that would touch a running instance or
// keep a free one (a GPU must hold its running pods' instances and the new
// ones only, so every decision destroys what departed pods left).
class Recorder : public ChurnPolicy {
 public:
  explicit Recorder(std::unique_ptr<ChurnPolicy> inner, std::function<int(int, double)> script = nullptr)
      : inner_(std::move(inner)), script_(std::move(script)) {}
  std::string name() const override { return inner_->name(); }
  MigLayout InitialLayout(const ChurnState& state, int gpu) override { return inner_->InitialLayout(state, gpu); }
  RelayoutCost Cost() const override { return inner_->Cost(); }
  void OnDepart(const ChurnPod& pod) override { inner_->OnDepart(pod); }
  bool DestroysFreedInstances() const override { return inner_->DestroysFreedInstances(); }

  std::optional<ChurnDecision> Place(const ChurnState& state, const ChurnPod& pod, bool may_relayout) override {
    ChurnPod asked = pod;
    if (script_) {
      asked.shape = script_(calls_++, state.now());
      if (asked.shape < 0) return std::nullopt;
    }
    std::optional<ChurnDecision> d = inner_->Place(state, asked, may_relayout);
    if (!d) return d;
    Check(state, *d);
    std::vector<Given> given;
    for (const ChurnSlot& s : d->slots) {
      const GpuModel& model = state.ModelOf(s.gpu);
      MigInstance inst;
      auto change = std::find_if(d->relayouts.begin(), d->relayouts.end(),
                                 [&](const ChurnRelayout& r) { return r.gpu == s.gpu; });
      if (change != d->relayouts.end()) {
        inst = change->layout[s.instance];
      } else {
        const ChurnInstance& c = state.gpus()[s.gpu].instances[s.instance];
        inst = MigInstance{c.profile, c.start};
      }
      given.push_back(Given{s.gpu, model.mig_profiles[inst.profile].name, inst.start});
    }
    placed_.push_back(std::move(given));
    layouts_.push_back(*d);
    return d;
  }

  const std::vector<std::vector<Given>>& placed() const { return placed_; }
  const std::vector<ChurnDecision>& decisions() const { return layouts_; }
  int violations() const { return violations_; }

 private:
  void Check(const ChurnState& state, const ChurnDecision& d) {
    if (!d.drains.empty()) ++violations_;
    // Every instance a departed pod left was destroyed when it left.
    for (int g = 0; g < static_cast<int>(state.gpus().size()); ++g) {
      if (static_cast<int>(state.gpus()[g].instances.size()) > state.gpus()[g].used_instances) ++violations_;
    }
    for (const ChurnRelayout& r : d.relayouts) {
      if (!r.per_instance) ++violations_;
      MigLayout used;
      for (const ChurnInstance& inst : state.gpus()[r.gpu].instances) {
        if (inst.pod >= 0) used.push_back(MigInstance{inst.profile, inst.start});
      }
      // The change starts with the used instances, in order, and adds only the pod's slots.
      int slots_here = 0;
      for (const ChurnSlot& s : d.slots) slots_here += s.gpu == r.gpu ? 1 : 0;
      if (r.layout.size() != used.size() + static_cast<std::size_t>(slots_here) ||
          !std::equal(used.begin(), used.end(), r.layout.begin())) {
        ++violations_;
      }
    }
  }

  std::unique_ptr<ChurnPolicy> inner_;
  std::function<int(int, double)> script_;
  int calls_ = 0;
  std::vector<std::vector<Given>> placed_;
  std::vector<ChurnDecision> layouts_;
  int violations_ = 0;
};

void ExpectGiven(const std::vector<Given>& got, int gpu, const std::string& profile, int start) {
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].gpu, gpu);
  EXPECT_EQ(got[0].profile, profile);
  EXPECT_EQ(got[0].start, start);
}

TEST(MigChurnDynamic, HamiSpreadsOverGpusAnd1gGoesHighest2gLowest) {
  Recorder ones(MakeHamiDynamicPolicy(5));
  const ChurnResult r1 = RunChurn(A100Nodes(1), PodsOf(k1g, 1e9), ones, Arrivals(60));
  EXPECT_EQ(r1.accepted, 56);  // seven 1g per GPU
  ASSERT_EQ(ones.placed().size(), 56u);
  // Spread: the least used GPU, ties to the higher index; 1g from the highest start down.
  ExpectGiven(ones.placed()[0], 7, "1g.5gb", 6);
  ExpectGiven(ones.placed()[1], 6, "1g.5gb", 6);
  ExpectGiven(ones.placed()[7], 0, "1g.5gb", 6);
  ExpectGiven(ones.placed()[8], 7, "1g.5gb", 5);
  ExpectGiven(ones.placed()[55], 0, "1g.5gb", 0);

  Recorder twos(MakeHamiDynamicPolicy(5));
  EXPECT_EQ(RunChurn(A100Nodes(1), PodsOf(k2g, 1e9), twos, Arrivals(30)).accepted, 24);
  ExpectGiven(twos.placed()[0], 7, "2g.10gb", 0);  // 2g from the lowest start up
  ExpectGiven(twos.placed()[8], 7, "2g.10gb", 2);
  ExpectGiven(twos.placed()[16], 7, "2g.10gb", 4);

  Recorder threes(MakeHamiDynamicPolicy(5));
  EXPECT_EQ(RunChurn(A100Nodes(1), PodsOf(k3g, 1e9), threes, Arrivals(20)).accepted, 16);
  ExpectGiven(threes.placed()[0], 7, "3g.20gb", 4);  // 3g from the highest start down
  ExpectGiven(threes.placed()[8], 7, "3g.20gb", 0);
  EXPECT_EQ(ones.violations() + twos.violations() + threes.violations(), 0);
}

// One GPU, a scripted sequence: each request takes the first free placement in
// HAMi's order, or is refused.
TEST(MigChurnDynamic, HamiPlacementOrderOnOneGpu) {
  const std::vector<int> script = {k1g, k2g, k1g, k3g, k2g, k1g, k1g};
  Recorder hami(MakeHamiDynamicPolicy(5),
                [&](int call, double) { return call < static_cast<int>(script.size()) ? script[call] : -1; });
  const ChurnResult r = RunChurn(A100Nodes(1, 1), PodsOf(k1g, 1e9), hami, Arrivals(10));
  EXPECT_EQ(r.accepted, 5);
  ASSERT_EQ(hami.placed().size(), 5u);
  ExpectGiven(hami.placed()[0], 0, "1g.5gb", 6);
  ExpectGiven(hami.placed()[1], 0, "2g.10gb", 0);
  ExpectGiven(hami.placed()[2], 0, "1g.5gb", 5);
  // The 3g is refused: 3g@4 overlaps the 1g at 5 and 6, 3g@0 the 2g at 0.
  ExpectGiven(hami.placed()[3], 0, "2g.10gb", 2);
  ExpectGiven(hami.placed()[4], 0, "1g.5gb", 4);
  // The last 1g is refused: slices 0-6 are taken and no 1g starts at 7.
  EXPECT_EQ(r.gi_changes, 5);  // five created, none destroyed
  EXPECT_EQ(hami.violations(), 0);
}

// HAMi matches memory only, over the default allowlist (1g, 2g, 3g, 7g): a 4g
// pod (19.5 GiB on A100-40GB) gets the smallest profile with that memory, a
// 3g.20gb — undersized; a 1g double-memory pod (9.62 GiB) gets a 2g.10gb.
// DRA requests the exact profile.
TEST(MigChurnDynamic, HamiTakesTheSmallestMemoryProfileDraTheExactOne) {
  Recorder hami4(MakeHamiDynamicPolicy(5));
  const ChurnResult h4 = RunChurn(A100Nodes(1), PodsOf(k4g, 1e9), hami4, Arrivals(20));
  EXPECT_EQ(h4.accepted, 16);  // two 3g.20gb per GPU
  EXPECT_EQ(h4.undersized, 16);
  ExpectGiven(hami4.placed()[0], 7, "3g.20gb", 4);
  Recorder dra4(MakeDraPolicy(5));
  const ChurnResult d4 = RunChurn(A100Nodes(1), PodsOf(k4g, 1e9), dra4, Arrivals(20));
  EXPECT_EQ(d4.accepted, 8);  // one 4g.20gb per GPU
  EXPECT_EQ(d4.undersized, 0);
  ExpectGiven(dra4.placed()[0], 0, "4g.20gb", 0);

  Recorder hami2m(MakeHamiDynamicPolicy(5));
  const ChurnResult h2m = RunChurn(A100Nodes(1), PodsOf(k1gDoubleMemory, 1e9), hami2m, Arrivals(40));
  EXPECT_EQ(h2m.accepted, 24);  // three 2g.10gb per GPU
  EXPECT_EQ(h2m.undersized, 0);
  ExpectGiven(hami2m.placed()[0], 7, "2g.10gb", 0);
  Recorder dra2m(MakeDraPolicy(5));
  EXPECT_EQ(RunChurn(A100Nodes(1), PodsOf(k1gDoubleMemory, 1e9), dra2m, Arrivals(40)).accepted, 32);
  ExpectGiven(dra2m.placed()[0], 0, "1g.10gb", 0);
  ExpectGiven(dra2m.placed()[1], 0, "1g.10gb", 2);
}

// One GPU filled by seven 1g pods (lifetime 100 s, created within the first
// seconds); requests are refused from 50 s to 200 s, then ask for a 7g. The
// 1g instances were destroyed when their pods ended, so the 7g fits.
void ExpectSevenOnesThenSeven(std::unique_ptr<ChurnPolicy> policy, const std::vector<int>& one_starts) {
  Recorder rec(std::move(policy), [](int, double now) { return now < 50 ? k1g : now < 200 ? -1 : k7g; });
  // 0.7 arrivals/s: 180 arrivals span about 260 s, within the 7g pod's life.
  const ChurnResult r = RunChurn(A100Nodes(1, 1), PodsOf(k1g, 100), rec, Arrivals(180, false, 10));
  SCOPED_TRACE(rec.name());
  ASSERT_EQ(r.accepted, 8);
  for (int i = 0; i < 7; ++i) ExpectGiven(rec.placed()[i], 0, "1g.5gb", one_starts[i]);
  ExpectGiven(rec.placed()[7], 0, "7g.40gb", 0);
  const ChurnDecision& seven = rec.decisions()[7];
  ASSERT_EQ(seven.relayouts.size(), 1u);
  EXPECT_EQ(seven.relayouts[0].layout, (MigLayout{MigInstance{seven.relayouts[0].layout[0].profile, 0}}));
  // The 1g instances created and destroyed as their pods end, the 7g too
  // (it lives 100 s, the run goes on 300 s past the last arrival); each a
  // change of the GPU.
  EXPECT_EQ(r.gi_changes, 7 + 7 + 1 + 1);
  EXPECT_EQ(r.relayouts, 16);
  for (double w : r.waits_s) EXPECT_DOUBLE_EQ(w, 5);  // every pod waits for its new instance
  EXPECT_EQ(rec.violations(), 0);
}

TEST(MigChurnDynamic, InstancesAreDestroyedAfterTheirPodsEnd) {
  ExpectSevenOnesThenSeven(MakeHamiDynamicPolicy(5), {6, 5, 4, 3, 2, 1, 0});
  ExpectSevenOnesThenSeven(MakeDraPolicy(5), {0, 1, 2, 3, 4, 5, 6});
}

TEST(MigChurnDynamic, DraTakesTheFirstFreeDeviceInSliceOrder) {
  Recorder ones(MakeDraPolicy(5));
  EXPECT_EQ(RunChurn(A100Nodes(1), PodsOf(k1g, 1e9), ones, Arrivals(60)).accepted, 56);
  ExpectGiven(ones.placed()[0], 0, "1g.5gb", 0);  // GPU by GPU, each profile's starts ascending
  ExpectGiven(ones.placed()[1], 0, "1g.5gb", 1);
  ExpectGiven(ones.placed()[6], 0, "1g.5gb", 6);
  ExpectGiven(ones.placed()[7], 1, "1g.5gb", 0);
  Recorder threes(MakeDraPolicy(5));
  EXPECT_EQ(RunChurn(A100Nodes(1), PodsOf(k3g, 1e9), threes, Arrivals(20)).accepted, 16);
  ExpectGiven(threes.placed()[0], 0, "3g.20gb", 0);
  ExpectGiven(threes.placed()[1], 0, "3g.20gb", 4);
  ExpectGiven(threes.placed()[2], 1, "3g.20gb", 0);
  EXPECT_EQ(ones.violations() + threes.violations(), 0);
}

TEST(MigChurnDynamic, DraPicksTheLeastAllocatedNodeHamiTheMostAllocated) {
  Recorder dra(MakeDraPolicy(5));
  EXPECT_EQ(RunChurn(A100Nodes(2), PodsOf(k3g, 1e9), dra, Arrivals(5)).accepted, 5);
  ExpectGiven(dra.placed()[0], 0, "3g.20gb", 0);  // both nodes empty: the first
  ExpectGiven(dra.placed()[1], 8, "3g.20gb", 0);  // node 1 is less allocated
  ExpectGiven(dra.placed()[2], 0, "3g.20gb", 4);
  ExpectGiven(dra.placed()[3], 8, "3g.20gb", 4);
  ExpectGiven(dra.placed()[4], 1, "3g.20gb", 0);

  Recorder hami(MakeHamiDynamicPolicy(5));
  EXPECT_EQ(RunChurn(A100Nodes(2), PodsOf(k1g, 1e9), hami, Arrivals(120)).accepted, 112);
  ExpectGiven(hami.placed()[0], 7, "1g.5gb", 6);
  ExpectGiven(hami.placed()[1], 6, "1g.5gb", 6);  // binpack: node 0 again
  ExpectGiven(hami.placed()[55], 0, "1g.5gb", 0);
  ExpectGiven(hami.placed()[56], 15, "1g.5gb", 6);  // node 0 full
}

// 3-GPU pods (a 7g per GPU) on two nodes of 8: two per node, and a fifth is
// refused although four GPUs are free, two on each node.
TEST(MigChurnDynamic, MultiGpuPodsTakeOneNodeAllOrNothing) {
  auto gpus_of = [](const std::vector<Given>& given) {
    std::vector<int> out;
    for (const Given& g : given) {
      EXPECT_EQ(g.profile, "7g.40gb");
      out.push_back(g.gpu);
    }
    return out;
  };
  Recorder hami(MakeHamiDynamicPolicy(5));
  EXPECT_EQ(RunChurn(A100Nodes(2), PodsOf(k7g, 1e9, 3), hami, Arrivals(6)).accepted, 4);
  ASSERT_EQ(hami.placed().size(), 4u);
  EXPECT_EQ(gpus_of(hami.placed()[0]), (std::vector<int>{7, 6, 5}));
  EXPECT_EQ(gpus_of(hami.placed()[1]), (std::vector<int>{4, 3, 2}));
  EXPECT_EQ(gpus_of(hami.placed()[2]), (std::vector<int>{15, 14, 13}));
  EXPECT_EQ(gpus_of(hami.placed()[3]), (std::vector<int>{12, 11, 10}));
  Recorder dra(MakeDraPolicy(5));
  EXPECT_EQ(RunChurn(A100Nodes(2), PodsOf(k7g, 1e9, 3), dra, Arrivals(6)).accepted, 4);
  ASSERT_EQ(dra.placed().size(), 4u);
  EXPECT_EQ(gpus_of(dra.placed()[0]), (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(gpus_of(dra.placed()[1]), (std::vector<int>{8, 9, 10}));
  EXPECT_EQ(gpus_of(dra.placed()[2]), (std::vector<int>{3, 4, 5}));
  EXPECT_EQ(gpus_of(dra.placed()[3]), (std::vector<int>{11, 12, 13}));
}

// Under churn (queue mode, a mixed workload) neither policy touches a running
// instance, keeps a free one, drains or pauses a node.
TEST(MigChurnDynamic, ChurnNeverTouchesARunningInstance) {
  auto pods = SyntheticWorkload("uniform", 500, 7);
  ASSERT_TRUE(pods.ok());
  ChurnConfig c;
  c.load = 1.3;
  c.warmup = 200;
  c.measured = 1000;
  for (auto make : {MakeHamiDynamicPolicy, MakeDraPolicy}) {
    Recorder rec(make(5));
    const ChurnResult r = RunChurn(A100Nodes(2), *pods, rec, c);
    SCOPED_TRACE(rec.name());
    EXPECT_GT(r.accepted, 500);
    EXPECT_GT(r.gi_changes, r.accepted);
    EXPECT_EQ(r.drains, 0);
    EXPECT_EQ(r.node_pauses, 0);
    EXPECT_EQ(rec.violations(), 0);
    if (rec.name() == "dra") {
      EXPECT_EQ(r.undersized, 0);
    } else {
      EXPECT_GT(r.undersized, 0);  // HAMi: 4g pods on 3g instances
    }
  }
}

}  // namespace
}  // namespace septa::gpu
