// FGD-MIG (P5) and GRMU (P6) of the MIG churn benchmark, on hand-checkable
// states built by scripted arrivals.
#include <gtest/gtest.h>

#include <set>

#include "gpu/mig_churn.h"
#include "gpu/mig_churn_support.h"
#include "tests/unit/gpu/mig_churn_fixtures.h"

namespace septa::gpu {
namespace {

const GpuModel& FgA100() { return *Catalog::Default().Find("A100-40GB"); }

std::array<double, kMigShapeCount> FgShares(std::initializer_list<std::pair<int, double>> items) {
  std::array<double, kMigShapeCount> shares = {};
  for (const auto& [shape, share] : items) shares[shape] = share;
  return shares;
}

using test::A100Nodes;
using test::Arrivals;
using test::PodsOf;

// Whether a decision leaves every running instance as it is (R-GI): empty
// string if so, else what it breaks.
std::string FgBreaks(const ChurnState& state, const ChurnDecision& d) {
  std::set<int> drained(d.drains.begin(), d.drains.end());
  for (int id : d.drains) {
    bool running = false;
    for (const ChurnGpu& g : state.gpus()) {
      for (const ChurnInstance& inst : g.instances) running |= inst.pod == id;
    }
    if (!running) return "drains a pod that does not run";
  }
  for (const ChurnRelayout& r : d.relayouts) {
    if (!r.per_instance) return "a whole-GPU re-layout";
    if (!ValidateLayout(state.ModelOf(r.gpu), r.layout).ok()) return "an invalid layout";
    for (const ChurnInstance& inst : state.gpus()[r.gpu].instances) {
      if (inst.pod < 0 || drained.count(inst.pod)) continue;
      if (std::find(r.layout.begin(), r.layout.end(), MigInstance{inst.profile, inst.start}) == r.layout.end()) {
        return "destroys a running instance";
      }
    }
  }
  for (const ChurnSlot& s : d.slots) {
    auto r =
        std::find_if(d.relayouts.begin(), d.relayouts.end(), [&](const ChurnRelayout& c) { return c.gpu == s.gpu; });
    const ChurnInstance* at = nullptr;
    MigInstance where;
    if (r == d.relayouts.end()) {
      at = &state.gpus()[s.gpu].instances.at(s.instance);
      where = MigInstance{at->profile, at->start};
    } else {
      where = r->layout.at(s.instance);
    }
    for (const ChurnInstance& inst : state.gpus()[s.gpu].instances) {
      if (inst.pod >= 0 && !drained.count(inst.pod) && inst.profile == where.profile && inst.start == where.start) {
        return "binds to a running instance";
      }
    }
  }
  return "";
}

// One scripted arrival: `shape` placed by the policy under test, or forced
// at (`gpu`, `start`) to build a state.
struct FgStep {
  int shape = k1g;
  int gpu = -1;
  int start = -1;
};
FgStep FgAsk(int shape) { return FgStep{shape, -1, -1}; }
FgStep FgForce(int shape, int gpu, int start) { return FgStep{shape, gpu, start}; }

// Plays the steps, one per arrival (the simulator's pods are 1g: the policy
// is asked with the step's shape instead). Calls within one arrival (a
// drained pod placed again in loss mode) go to the policy as they are.
// Every GPU starts empty. Records the decisions and the state before each.
class FgScripted : public ChurnPolicy {
 public:
  FgScripted(std::unique_ptr<ChurnPolicy> inner, std::vector<FgStep> steps)
      : inner_(std::move(inner)), steps_(std::move(steps)) {}
  std::string name() const override { return inner_->name(); }
  MigLayout InitialLayout(const ChurnState& /*state*/, int /*gpu*/) override { return {}; }
  RelayoutCost Cost() const override { return inner_->Cost(); }
  void OnDepart(const ChurnPod& pod) override { inner_->OnDepart(pod); }

  std::optional<ChurnDecision> Place(const ChurnState& state, const ChurnPod& pod, bool may_relayout) override {
    if (state.arrivals() == last_arrival_) {
      auto d = inner_->Place(state, pod, may_relayout);
      if (d) breaks_ += FgBreaks(state, *d);
      return d;
    }
    last_arrival_ = state.arrivals();
    before_.push_back(state.gpus());
    if (next_ >= steps_.size()) return std::nullopt;
    const FgStep step = steps_[next_++];
    std::optional<ChurnDecision> d;
    if (step.gpu >= 0) {
      std::vector<ChurnInstance> after = state.gpus()[step.gpu].instances;
      const int p = state.ProfileOf(state.gpus()[step.gpu].model, step.shape);
      const int slot = ChurnAddInstance(state.ModelOf(step.gpu), after, p, step.start);
      d = ChurnBindAfterChange(state, step.gpu, after, slot);
    } else {
      ChurnPod asked = pod;
      asked.shape = step.shape;
      d = inner_->Place(state, asked, may_relayout);
      if (d) breaks_ += FgBreaks(state, *d);
    }
    decisions_.push_back(d);
    return d;
  }

  // Runs the steps and one more arrival, to see the state they leave.
  ChurnResult Run(int gpus) {
    return RunChurn(A100Nodes(1, gpus), PodsOf(k1g, 1e9), *this, Arrivals(static_cast<int>(steps_.size()) + 1));
  }
  const std::vector<std::optional<ChurnDecision>>& decisions() const { return decisions_; }
  const std::vector<ChurnGpu>& final_gpus() const { return before_.back(); }
  const std::string& breaks() const { return breaks_; }

 private:
  std::unique_ptr<ChurnPolicy> inner_;
  std::vector<FgStep> steps_;
  std::size_t next_ = 0;
  int last_arrival_ = -1;
  std::vector<std::optional<ChurnDecision>> decisions_;
  std::vector<std::vector<ChurnGpu>> before_;
  std::string breaks_;
};

// The used instances of a GPU, as "profile@start" sorted.
std::vector<std::string> FgUsed(const ChurnGpu& gpu) {
  std::vector<std::string> out;
  for (const ChurnInstance& inst : gpu.instances) {
    if (inst.pod >= 0) out.push_back(FgA100().mig_profiles[inst.profile].name + "@" + std::to_string(inst.start));
  }
  std::sort(out.begin(), out.end());
  return out;
}

TEST(MigChurnFgd, FragmentationTableOfEmptyPartAndFullGpus) {
  const GpuModel& a100 = FgA100();
  const auto w = FgShares({{k1g, 0.1}, {k2g, 0.2}, {k3g, 0.3}, {k4g, 0.2}, {k7g, 0.2}});
  // Empty: slice 7 never hosts a 1g, slices 6-7 never a 2g, 4-7 never a 4g.
  EXPECT_EQ(ChurnUnusableSlices(a100, ShapeProfile(a100, k1g), 0), 1);
  EXPECT_EQ(ChurnUnusableSlices(a100, ShapeProfile(a100, k2g), 0), 2);
  EXPECT_EQ(ChurnUnusableSlices(a100, ShapeProfile(a100, k4g), 0), 4);
  EXPECT_EQ(ChurnUnusableSlices(a100, ShapeProfile(a100, k7g), 0), 0);
  EXPECT_NEAR(ChurnExpectedUnusable(a100, w, 0), 0.1 * 1 + 0.2 * 2 + 0.2 * 4, 1e-12);
  // Full: no free slice, nothing unusable.
  EXPECT_NEAR(ChurnExpectedUnusable(a100, w, 0xFF), 0, 1e-12);
  // A 4g at slice 0 used: 1g loses slice 7, 2g 6-7, 4g and 7g all four free slices; 3g@4 fits.
  EXPECT_NEAR(ChurnExpectedUnusable(a100, w, 0x0F), 0.1 * 1 + 0.2 * 2 + 0.2 * 4 + 0.2 * 4, 1e-12);
}

// The tables go by used slices only: compute slices and instance counts never
// bind once the slices are free (for the shapes, `+me` excluded). Checked on
// every valid set of instances of the A100-40GB.
TEST(MigChurnFgd, UsedSlicesDecideWhereAnInstanceFits) {
  const GpuModel& a100 = FgA100();
  std::set<MigLayout> seen;
  int checked = 0;
  for (const MigLayout& maximal : MaximalLayouts(a100)) {
    for (std::uint32_t subset = 0; subset < (1u << maximal.size()); ++subset) {
      MigLayout layout;
      bool media = false;
      for (std::size_t i = 0; i < maximal.size(); ++i) {
        if ((subset >> i) & 1u) layout.push_back(maximal[i]);
        if (((subset >> i) & 1u) && a100.mig_profiles[maximal[i].profile].media_extensions) media = true;
      }
      if (media || !seen.insert(layout).second) continue;
      std::uint32_t used = 0;
      for (const MigInstance& inst : layout) used |= SliceMask(a100.mig_profiles[inst.profile], inst.start);
      for (int s = 0; s < kMigShapeCount; ++s) {
        const int p = ShapeProfile(a100, s);
        std::vector<int> by_mask;
        for (int start : a100.mig_profiles[p].starts) {
          if ((SliceMask(a100.mig_profiles[p], start) & used) == 0) by_mask.push_back(start);
        }
        EXPECT_EQ(FreePlacements(a100, layout, p), by_mask) << LayoutToString(a100, layout) << " + " << s;
        ++checked;
      }
    }
  }
  EXPECT_GT(checked, 1000);
}

TEST(MigChurnFgd, OneGKeepsTheFourGRangeOfAnEmptyGpu) {
  // 1g at 0-3 would leave no 4g (start 0 only); at 6 it also keeps 2g@4.
  FgScripted run(MakeFgdMigPolicy(FgShares({{k1g, 0.2}, {k2g, 0.1}, {k3g, 0.3}, {k4g, 0.4}}), 5), {FgAsk(k1g)});
  run.Run(1);
  EXPECT_EQ(FgUsed(run.final_gpus()[0]), std::vector<std::string>{"1g.5gb@6"});
  EXPECT_EQ(run.breaks(), "");
}

TEST(MigChurnFgd, OneGGoesWhereNoFourGRangeIsSplit) {
  // GPU 0 runs a 3g at 4-7: its free 0-3 is its only 4g range. GPU 1 runs a
  // 4g at 0-3. Both have 4 free slices (best fit would tie and take GPU 0);
  // FGD-MIG splits no 4g range: the 1g goes to GPU 1, at 6.
  FgScripted run(MakeFgdMigPolicy(FgShares({{k1g, 0.2}, {k2g, 0.1}, {k3g, 0.3}, {k4g, 0.4}}), 5),
                 {FgForce(k3g, 0, 4), FgForce(k4g, 1, 0), FgAsk(k1g)});
  run.Run(2);
  EXPECT_EQ(FgUsed(run.final_gpus()[0]), std::vector<std::string>{"3g.20gb@4"});
  EXPECT_EQ(FgUsed(run.final_gpus()[1]), (std::vector<std::string>{"1g.5gb@6", "4g.20gb@0"}));
  EXPECT_EQ(run.breaks(), "");
}

TEST(MigChurnFgd, CreatesBesideRunningInstancesAndDestroysFreeOnesLazily) {
  // Stock layouts (1g×2 + 2g + 3g free); 4g pods: the first takes GPU 0's
  // slices 0-3, destroying the free instances there and keeping the 3g.
  auto fgd = MakeFgdMigPolicy(FgShares({{k4g, 1}}), 5);
  ChurnPod pod;
  pod.shape = k4g;
  pod.lifetime_s = 1e9;
  const ChurnResult r = RunChurn(A100Nodes(1, 2), {pod}, *fgd, Arrivals(3));
  EXPECT_EQ(r.accepted, 2);  // one 4g per GPU
  EXPECT_EQ(r.relayouts, 2);
  for (double w : r.waits_s) EXPECT_DOUBLE_EQ(w, 5);  // each runs once its instance exists
}

TEST(MigChurnGrmu, SmallPodsStayOutOfLargeBasketGpusWithinQuota) {
  // 3 GPUs; small share 0.2: the small basket holds ceil(3 × 0.2 × 1.5) = 1
  // GPU. GPU 0 runs a 4g (large basket). The first 1g would best-fit on GPU 0
  // (3 free slices left) but goes to idle GPU 1; seven 1g fill GPU 1; the
  // eighth is refused: GPU 2 may not join the full small basket and GPU 0,
  // with room, is large.
  std::vector<FgStep> steps = {FgForce(k4g, 0, 0)};
  for (int i = 0; i < 8; ++i) steps.push_back(FgAsk(k1g));
  FgScripted run(MakeGrmuPolicy(FgShares({{k1g, 0.2}, {k4g, 0.8}}), 5, 0), steps);
  run.Run(3);
  ASSERT_EQ(run.decisions().size(), 9u);
  for (int i = 1; i < 8; ++i) EXPECT_TRUE(run.decisions()[i].has_value()) << i;
  EXPECT_FALSE(run.decisions()[8].has_value());
  EXPECT_EQ(FgUsed(run.final_gpus()[0]), std::vector<std::string>{"4g.20gb@0"});
  EXPECT_EQ(FgUsed(run.final_gpus()[1]).size(), 7u);
  EXPECT_TRUE(FgUsed(run.final_gpus()[2]).empty());
  EXPECT_EQ(run.breaks(), "");
}

// GPU 0 (small basket) runs 1g at 0, 2, 4, 6: no 2g fits (starts 0, 2, 4).
// GPUs 1 and 2 are full with 4g + 3g (large basket).
std::vector<FgStep> FgDrainSetup() {
  return {FgForce(k4g, 1, 0), FgForce(k3g, 1, 4), FgForce(k4g, 2, 0), FgForce(k3g, 2, 4),
          FgForce(k1g, 0, 0), FgForce(k1g, 0, 2), FgForce(k1g, 0, 4), FgForce(k1g, 0, 6)};
}
const auto kFgDrainShares = FgShares({{k1g, 0.3}, {k2g, 0.3}, {k3g, 0.2}, {k4g, 0.2}});

TEST(MigChurnGrmu, DrainsOnlyWithinItsBudget) {
  // Budget: half a drain per accepted pod. The first 2g finds half a drain:
  // refused. A 1g is accepted (at 5: 1g from the highest start down). The
  // second 2g has one drain: the youngest of the 1g blocking a 2g range
  // alone (at 2; 4 and 5 block 2g@4 together) is drained, the 2g takes 2-3
  // and the drained 1g goes back to slice 1 (created in the same decision),
  // placed again at once. The third 2g has half a drain again: refused.
  std::vector<FgStep> steps = FgDrainSetup();
  steps.push_back(FgAsk(k2g));
  steps.push_back(FgAsk(k1g));
  steps.push_back(FgAsk(k2g));
  steps.push_back(FgAsk(k2g));
  FgScripted run(MakeGrmuPolicy(kFgDrainShares, 5, 0.5), steps);
  const ChurnResult r = run.Run(3);
  const auto& d = run.decisions();
  ASSERT_EQ(d.size(), 12u);
  EXPECT_FALSE(d[8].has_value());
  ASSERT_TRUE(d[9].has_value());
  EXPECT_TRUE(d[9]->drains.empty());
  ASSERT_TRUE(d[10].has_value());
  EXPECT_EQ(d[10]->drains.size(), 1u);
  EXPECT_FALSE(d[11].has_value());
  EXPECT_EQ(r.drains, 1);
  EXPECT_EQ(r.dropped, 0);
  EXPECT_EQ(FgUsed(run.final_gpus()[0]),
            (std::vector<std::string>{"1g.5gb@0", "1g.5gb@1", "1g.5gb@4", "1g.5gb@5", "1g.5gb@6", "2g.10gb@2"}));
  EXPECT_EQ(run.breaks(), "");
}

TEST(MigChurnGrmu, NeverDrainsWhenTheDrainedPodsCannotBePlacedAgain) {
  // GPU 0 full of 1g (0-6); GPU 2 runs only a 4g: room, but in the large
  // basket. A 2g needs two 1g drained, and neither would fit anywhere once
  // the 2g took their slices: no drain, refused, however large the budget.
  std::vector<FgStep> steps = {FgForce(k4g, 1, 0), FgForce(k3g, 1, 4), FgForce(k4g, 2, 0)};
  for (int s = 0; s < 7; ++s) steps.push_back(FgForce(k1g, 0, s));
  steps.push_back(FgAsk(k2g));
  FgScripted run(MakeGrmuPolicy(kFgDrainShares, 5, 3), steps);
  const ChurnResult r = run.Run(3);
  ASSERT_EQ(run.decisions().size(), 11u);
  EXPECT_FALSE(run.decisions()[10].has_value());
  EXPECT_EQ(r.drains, 0);
  EXPECT_EQ(FgUsed(run.final_gpus()[0]).size(), 7u);
}

// Checks every decision of a policy against the state it was made on.
class FgChecked : public ChurnPolicy {
 public:
  explicit FgChecked(std::unique_ptr<ChurnPolicy> inner) : inner_(std::move(inner)) {}
  std::string name() const override { return inner_->name(); }
  MigLayout InitialLayout(const ChurnState& state, int gpu) override { return inner_->InitialLayout(state, gpu); }
  RelayoutCost Cost() const override { return inner_->Cost(); }
  void OnDepart(const ChurnPod& pod) override { inner_->OnDepart(pod); }
  std::optional<ChurnDecision> Place(const ChurnState& state, const ChurnPod& pod, bool may_relayout) override {
    auto d = inner_->Place(state, pod, may_relayout);
    if (d) {
      ++decisions_;
      const std::string b = FgBreaks(state, *d);
      if (!b.empty()) breaks_.push_back(b);
    }
    return d;
  }
  int decisions_ = 0;
  std::vector<std::string> breaks_;

 private:
  std::unique_ptr<ChurnPolicy> inner_;
};

TEST(MigChurnFgdGrmu, NoRunningInstanceIsTouchedUnderChurn) {
  ChurnCluster cluster = A100Nodes(1, 8);
  cluster.node_model = {0, 0};
  auto pods = SyntheticWorkload("uniform", 400, 3);
  ASSERT_TRUE(pods.ok());
  ChurnPod pair;  // a 2-GPU pod now and then
  pair.shape = k7g;
  pair.gpus = 2;
  pair.lifetime_s = 1800;
  pods->push_back(pair);
  const auto shares = SliceTimeShares(*pods);
  for (bool queue : {true, false}) {
    for (int which = 0; which < 2; ++which) {
      FgChecked policy(which == 0 ? MakeFgdMigPolicy(shares, 5) : MakeGrmuPolicy(shares, 5, 0.05));
      ChurnConfig config;
      config.load = 1.3;
      config.queue = queue;
      config.warmup = 200;
      config.measured = 3000;
      const ChurnResult r = RunChurn(cluster, *pods, policy, config);
      EXPECT_GT(policy.decisions_, 1000) << policy.name();
      EXPECT_TRUE(policy.breaks_.empty()) << policy.name() << ": " << policy.breaks_.front();
      EXPECT_GT(r.gi_changes, 0) << policy.name();
      EXPECT_EQ(r.node_pauses, 0) << policy.name();
      if (which == 1) {
        EXPECT_GT(r.drains, 0);
        EXPECT_LE(r.drains, 0.05 * r.accepted + 3);
      } else {
        EXPECT_EQ(r.drains, 0);
      }
    }
  }
}

}  // namespace
}  // namespace septa::gpu
