#include "gpu/engine.h"
#include "tests/unit/gpu/h100.h"

#include <gtest/gtest.h>

#include <random>
#include <set>

namespace septa::gpu {
namespace {

InventoryGpu Gpu(const std::string& model, int index, bool mig = false, MigLayout layout = {}) {
  return InventoryGpu{model, index, "GPU-" + model + "-" + std::to_string(index), mig, std::move(layout)};
}

InventoryNode Node(const std::string& name, int cpu, int mem, std::vector<InventoryGpu> gpus,
                   std::vector<Taint> taints = {}) {
  InventoryNode node;
  node.name = name;
  node.cpu_milli = cpu;
  node.memory_mib = mem;
  node.taints = std::move(taints);
  node.gpus = std::move(gpus);
  return node;
}

using test::H100;
using test::P;

// 3g.40gb@0 + 2g.20gb@4 + 1g.10gb@6: three tenants can share one MIG GPU.
MigLayout Balanced() { return {{P("3g.40gb"), 0}, {P("2g.20gb"), 4}, {P("1g.10gb"), 6}}; }

std::vector<InventoryNode> MixedCluster() {
  std::vector<InventoryNode> nodes;
  nodes.push_back(Node("a-t4", 32000, 65536, {Gpu("T4", 0), Gpu("T4", 1)}));
  nodes.push_back(Node("b-h100", 64000, 262144,
                       {Gpu("H100-80GB", 0, true, Balanced()), Gpu("H100-80GB", 1, true, Balanced()),
                        Gpu("H100-80GB", 2), Gpu("H100-80GB", 3)}));
  nodes.push_back(Node("c-a10", 16000, 65536, {Gpu("A10", 0)}));
  nodes.push_back(
      Node("d-v100", 48000, 131072, {Gpu("V100M32", 0), Gpu("V100M32", 1), Gpu("V100M32", 2), Gpu("V100M32", 3)}));
  nodes.push_back(Node("e-h100", 64000, 262144,
                       {Gpu("H100-80GB", 0, true, {{P("3g.40gb"), 0}, {P("3g.40gb"), 4}}), Gpu("H100-80GB", 1)}));
  nodes.push_back(Node("f-cpu", 8000, 16384, {}));
  return nodes;
}

std::unique_ptr<PlacementEngine> Engine(std::vector<InventoryNode> nodes, std::string_view policy = "septa") {
  auto e = PlacementEngine::Create(std::move(nodes), Catalog::Default(), policy);
  EXPECT_TRUE(e.ok()) << e.status().ToString();
  return std::move(e).value();
}

PlacementRequest Request(const std::string& tenant, Tier tier, int cpu, int mem, int count, int milli,
                         std::string profile = "") {
  PlacementRequest r;
  r.tenant = tenant;
  r.tier = tier;
  r.cpu_milli = cpu;
  r.memory_mib = mem;
  r.gpu_count = count;
  r.milli_gpu = milli;
  r.mig_profile = std::move(profile);
  return r;
}

TEST(Engine, SharedFractionsShareOnlyWithShared) {
  auto e = Engine({Node("n", 16000, 65536, {Gpu("T4", 0), Gpu("T4", 1)})});
  auto a = e->Place(Request("t1", Tier::kShared, 1000, 1024, 1, 500));
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  auto b = e->Place(Request("t2", Tier::kShared, 1000, 1024, 1, 500));
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(a->gpus, b->gpus);  // packs the second fraction onto the same GPU
  EXPECT_EQ(e->Mode(0, a->gpus[0]), GpuMode::kTimeShared);
  // A dedicated tenant may not join a node where fractions run.
  auto d = e->Place(Request("t3", Tier::kDedicated, 1000, 1024, 1, 1000));
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.status().code(), Code::kResourceExhausted);
  EXPECT_EQ(d.status().violations().at(0).field, "tier");
  EXPECT_EQ(d.status().violations().at(0).description, "1 node");
}

TEST(Engine, IsolatedGetsOnlyMigSlicesAndSeveralTenantsShareAMigGpu) {
  auto e = Engine({Node("n", 64000, 262144, {Gpu("H100-80GB", 0, true, Balanced()), Gpu("H100-80GB", 1)})});
  auto a = e->Place(Request("t1", Tier::kIsolated, 1000, 1024, 1, 1000, "3g.40gb"));
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ(a->gpus, std::vector<int>{0});
  EXPECT_EQ(a->mig_start, 0);
  EXPECT_EQ(a->mig_slices, 4);
  auto b = e->Place(Request("t2", Tier::kIsolated, 1000, 1024, 1, 1000, "2g.20gb"));
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->mig_start, 4);
  auto c = e->Place(Request("t3", Tier::kIsolated, 1000, 1024, 1, 1000, "3g.40gb"));
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().violations().at(0).field, "mig");
  // Never a fraction on the MIG GPU: the shared tier lands on GPU 1.
  auto s = e->Place(Request("t4", Tier::kShared, 1000, 1024, 1, 300));
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->gpus, std::vector<int>{1});
  EXPECT_FALSE(e->Place(Request("t5", Tier::kIsolated, 1, 1, 1, 1000)).ok());  // no profile: invalid
}

TEST(Engine, ExclusiveTakesAWholeUntouchedNode) {
  auto e = Engine({Node("big", 96000, 393216, {Gpu("A10", 0), Gpu("A10", 1), Gpu("A10", 2), Gpu("A10", 3)}),
                   Node("small", 16000, 65536, {Gpu("A10", 0), Gpu("A10", 1)})});
  auto x = e->Place(Request("reg", Tier::kExclusive, 1000, 1024, 2, 1000));
  ASSERT_TRUE(x.ok());
  EXPECT_EQ(x->node_name, "small");  // the smallest node that will do
  EXPECT_EQ(e->FreeCpu(x->node), 0);
  EXPECT_FALSE(e->Place(Request("reg", Tier::kShared, 1, 1, 1, 10)).ok() &&
               e->allocations().rbegin()->second.node == x->node);
  auto other = e->Place(Request("t", Tier::kShared, 1000, 1024, 1, 100));
  ASSERT_TRUE(other.ok());
  EXPECT_EQ(other->node_name, "big");
  auto again = e->Place(Request("reg2", Tier::kExclusive, 1000, 1024, 1, 1000));
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.status().violations().at(0).field, "tier");
  EXPECT_EQ(again.status().violations().at(0).description, "2 nodes");
}

TEST(Engine, NodesThatAreNotReadyTakeNothingNew) {
  std::vector<InventoryNode> nodes = {Node("a", 16000, 65536, {Gpu("T4", 0)}),
                                      Node("b", 64000, 262144, {Gpu("H100-80GB", 0, true, Balanced())})};
  nodes[0].health = NodeHealth::kNotReady;
  nodes[1].health = NodeHealth::kGone;
  auto e = Engine(nodes);
  for (const PlacementRequest& r :
       {Request("t", Tier::kShared, 0, 0, 1, 100), Request("t", Tier::kDedicated, 0, 0, 1, 1000),
        Request("t", Tier::kIsolated, 0, 0, 1, 1000, "3g.40gb"), Request("t", Tier::kExclusive, 0, 0, 1, 1000)}) {
    auto refused = e->Place(r);
    ASSERT_FALSE(refused.ok()) << TierName(r.tier);
    EXPECT_EQ(refused.status().violations().at(0).field, "health");
    EXPECT_EQ(refused.status().violations().at(0).description, "2 nodes");
  }
}

TEST(Engine, HoldTakesRecordedPlacementsAgainExactlyWhereTheyWere) {
  auto first = Engine(MixedCluster());
  std::vector<Placement> placed;
  for (const PlacementRequest& r :
       {Request("s", Tier::kShared, 0, 0, 1, 300), Request("i", Tier::kIsolated, 0, 0, 1, 1000, "2g.20gb"),
        Request("d", Tier::kDedicated, 0, 0, 2, 1000), Request("x", Tier::kExclusive, 0, 0, 1, 1000)}) {
    auto p = first->Place(r);
    ASSERT_TRUE(p.ok()) << p.status().ToString();
    placed.push_back(*p);
  }
  // Rebuild a second engine from the record of the first one's allocations.
  auto rebuilt = Engine(MixedCluster());
  for (const auto& [id, a] : first->allocations()) {
    RecordedPlacement r{a.tenant, a.tier, first->nodes()[a.node].name, a.gpus, a.milli_gpu, a.mig_profile, a.mig_start};
    auto held = rebuilt->Hold(r);
    ASSERT_TRUE(held.ok()) << held.status().ToString();
    EXPECT_EQ(held->node_name, r.node);
    EXPECT_EQ(held->gpus, a.gpus);
  }
  for (std::size_t n = 0; n < first->nodes().size(); ++n) {
    EXPECT_EQ(rebuilt->FreeCpu(n), first->FreeCpu(n));
    for (std::size_t g = 0; g < first->nodes()[n].gpus.size(); ++g) {
      EXPECT_EQ(rebuilt->Mode(n, g), first->Mode(n, g)) << first->nodes()[n].name << " GPU " << g;
      EXPECT_EQ(rebuilt->FreeMilli(n, g), first->FreeMilli(n, g));
    }
  }
  // Holding the same MIG instance twice is a conflict, not a second booking.
  const Allocation& mig = std::find_if(first->allocations().begin(), first->allocations().end(), [](const auto& kv) {
                            return kv.second.tier == Tier::kIsolated;
                          })->second;
  auto twice = rebuilt->Hold(
      {"other", Tier::kIsolated, first->nodes()[mig.node].name, mig.gpus, 0, mig.mig_profile, mig.mig_start});
  ASSERT_FALSE(twice.ok());
  EXPECT_EQ(twice.status().code(), Code::kFailedPrecondition);
  EXPECT_NE(twice.status().message().find("held already"), std::string::npos) << twice.status().message();
}

TEST(Engine, HoldRefusesRecordsThatConflictOrNoLongerMatchTheInventory) {
  auto e = Engine({Node("n", 64000, 262144, {Gpu("H100-80GB", 0, true, Balanced()), Gpu("H100-80GB", 1)}),
                   Node("t", 16000, 65536, {Gpu("T4", 0)})});
  auto refused = [&](const RecordedPlacement& r, const std::string& why) {
    auto held = e->Hold(r);
    ASSERT_FALSE(held.ok()) << r.node;
    EXPECT_NE(held.status().message().find(why), std::string::npos) << held.status().message();
  };
  EXPECT_EQ(e->Hold({"a", Tier::kShared, "gone", {0}, 100, "", -1}).status().code(), Code::kNotFound);
  refused({"a", Tier::kIsolated, "n", {0}, 0, "3g.40gb", 4}, "no 3g.40gb instance at slice 4");
  refused({"a", Tier::kShared, "n", {0}, 100, "", -1}, "MIG mode");
  refused({"a", Tier::kShared, "n", {7}, 100, "", -1}, "no GPU 7");
  refused({"a", Tier::kShared, "t", {0}, 1001, "", -1}, "do not fit");
  ASSERT_TRUE(e->Hold({"a", Tier::kShared, "t", {0}, 600, "", -1}).ok());
  refused({"b", Tier::kShared, "t", {0}, 500, "", -1}, "500 milli-GPU do not fit in the 400 free");
  refused({"b", Tier::kDedicated, "t", {0}, 1000, "", -1}, "fractions or MIG instances");
  refused({"b", Tier::kExclusive, "t", {}, 0, "", -1}, "other allocations");
  ASSERT_TRUE(e->Hold({"d", Tier::kDedicated, "n", {1}, 1000, "", -1}).ok());
  refused({"b", Tier::kIsolated, "n", {0}, 0, "3g.40gb", 0}, "holds whole GPUs");
}

TEST(Engine, RefusalCountsEachConstraint) {
  auto e = Engine({Node("a", 1000, 1024, {Gpu("T4", 0)}), Node("b", 64000, 1024, {Gpu("T4", 0)}),
                   Node("c", 64000, 262144, {Gpu("A10", 0)}),
                   Node("d", 64000, 262144, {Gpu("T4", 0)}, {{"septa.io/tenant", "acme", "NoSchedule"}})});
  PlacementRequest r = Request("t", Tier::kDedicated, 8000, 8192, 1, 1000);
  r.models = {"T4"};
  auto refused = e->Place(r);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().message(),
            "no node fits the dedicated request of tenant t: taint on 1 node, model on 1 node, cpu on 1 node, "
            "memory on 1 node");
  r.tolerations = {{"septa.io/tenant", "acme", "NoSchedule"}};
  auto placed = e->Place(r);
  ASSERT_TRUE(placed.ok());
  EXPECT_EQ(placed->node_name, "d");
  r.models = {"NoSuchGpu"};
  EXPECT_EQ(e->Place(r).status().code(), Code::kInvalidArgument);
}

TEST(Engine, CreateRejectsBadInventory) {
  EXPECT_FALSE(PlacementEngine::Create({Node("n", 1, 1, {Gpu("Z1", 0)})}, Catalog::Default()).ok());
  EXPECT_FALSE(PlacementEngine::Create({Node("n", 1, 1, {Gpu("T4", 0, true)})}, Catalog::Default()).ok());
  EXPECT_FALSE(
      PlacementEngine::Create({Node("n", 1, 1, {Gpu("H100-80GB", 0, true, {{P("7g.80gb"), 0}, {P("1g.10gb"), 0}})})},
                              Catalog::Default())
          .ok());
  EXPECT_FALSE(PlacementEngine::Create({Node("n", 1, 1, {}), Node("n", 1, 1, {})}, Catalog::Default()).ok());
}

// Recomputes everything the engine must guarantee from its allocations alone.
void CheckInvariants(const PlacementEngine& e) {
  const auto& nodes = e.nodes();
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    long cpu = 0, mem = 0;
    std::vector<int> milli(nodes[i].gpus.size(), 0);
    std::vector<std::uint32_t> slices(nodes[i].gpus.size(), 0);
    std::set<std::string> tenants;
    std::set<Tier> tiers;
    std::vector<std::set<AllocationKind>> kinds(nodes[i].gpus.size());
    for (const auto& [id, a] : e.allocations()) {
      if (a.node != static_cast<int>(i)) continue;
      cpu += a.cpu_milli;
      mem += a.memory_mib;
      tenants.insert(a.tenant);
      tiers.insert(a.tier);
      for (int g : a.gpus) {
        kinds[g].insert(a.kind);
        if (a.kind == AllocationKind::kMigSlice) {
          ASSERT_TRUE(nodes[i].gpus[g].mig_enabled);
          const std::uint32_t range = ((1u << a.mig_slices) - 1u) << a.mig_start;
          ASSERT_EQ(slices[g] & range, 0u) << "MIG ranges overlap on " << nodes[i].name;
          slices[g] |= range;
          ASSERT_EQ(a.tier, Tier::kIsolated);
        } else {
          // An exclusive tenant gets the node's MIG GPUs too; nobody else puts a non-MIG allocation there.
          if (a.kind != AllocationKind::kExclusiveNode) {
            ASSERT_FALSE(nodes[i].gpus[g].mig_enabled) << "fraction or whole allocation on a MIG GPU";
          }
          milli[g] += a.milli_gpu;
        }
      }
      if (a.kind == AllocationKind::kFractional) {
        ASSERT_EQ(a.tier, Tier::kShared);
      }
      if (a.kind == AllocationKind::kWholeGpus) {
        ASSERT_EQ(a.tier, Tier::kDedicated);
      }
      if (a.kind == AllocationKind::kExclusiveNode) {
        ASSERT_EQ(a.tier, Tier::kExclusive);
      }
    }
    ASSERT_LE(cpu, nodes[i].cpu_milli);
    ASSERT_LE(mem, nodes[i].memory_mib);
    ASSERT_EQ(e.FreeCpu(static_cast<int>(i)), nodes[i].cpu_milli - cpu);
    ASSERT_EQ(e.FreeMemory(static_cast<int>(i)), nodes[i].memory_mib - mem);
    for (std::size_t g = 0; g < milli.size(); ++g) {
      ASSERT_LE(milli[g], kMilliPerGpu);
      ASSERT_LE(kinds[g].size(), 1u) << "a GPU in two modes";
      if (!nodes[i].gpus[g].mig_enabled || milli[g] > 0) {
        ASSERT_EQ(e.FreeMilli(static_cast<int>(i), static_cast<int>(g)), kMilliPerGpu - milli[g]);
      }
    }
    if (tiers.count(Tier::kExclusive)) {
      ASSERT_EQ(tenants.size(), 1u);
      ASSERT_EQ(tiers.size(), 1u);
    }
    if (tiers.count(Tier::kDedicated)) {
      ASSERT_FALSE(tiers.count(Tier::kShared) || tiers.count(Tier::kIsolated)) << nodes[i].name;
    }
  }
}

class EngineProperty : public ::testing::TestWithParam<std::string> {};

TEST_P(EngineProperty, RandomRequestsAndReleasesKeepEveryInvariant) {
  std::mt19937_64 rng(7);
  const std::vector<std::string> tenants = {"t0", "t1", "t2", "t3", "t4"};
  const std::vector<std::string> profiles = {"1g.10gb", "2g.20gb", "3g.40gb", "1g.20gb"};
  for (int round = 0; round < 500; ++round) {
    auto e = Engine(MixedCluster(), GetParam());
    const auto initial_cpu = [&] {
      std::vector<int> v;
      for (std::size_t i = 0; i < e->nodes().size(); ++i) v.push_back(e->FreeCpu(static_cast<int>(i)));
      return v;
    }();
    std::vector<std::uint64_t> live;
    for (int step = 0; step < 150; ++step) {
      if (!live.empty() && rng() % 3 == 0) {
        const std::size_t k = rng() % live.size();
        ASSERT_TRUE(e->Release(live[k]).ok());
        live.erase(live.begin() + static_cast<std::ptrdiff_t>(k));
      } else {
        const Tier tier = static_cast<Tier>(rng() % 4);
        PlacementRequest r = Request(tenants[rng() % tenants.size()], tier, static_cast<int>(rng() % 12) * 1000,
                                     static_cast<int>(rng() % 32) * 1024, 1, 1000);
        if (tier == Tier::kShared) r.milli_gpu = 50 + static_cast<int>(rng() % 20) * 50;
        if (tier == Tier::kDedicated || tier == Tier::kExclusive) r.gpu_count = 1 + static_cast<int>(rng() % 3);
        if (tier == Tier::kIsolated) r.mig_profile = profiles[rng() % profiles.size()];
        if (rng() % 5 == 0) r.models = {rng() % 2 ? "T4" : "H100-80GB"};
        auto placed = e->Place(r);
        if (placed.ok()) {
          live.push_back(placed->allocation_id);
        } else {
          ASSERT_EQ(placed.status().code(), Code::kResourceExhausted) << placed.status().ToString();
          ASSERT_FALSE(placed.status().violations().empty());
        }
      }
      CheckInvariants(*e);
    }
    EXPECT_EQ(e->Release(999999).code(), Code::kNotFound);
    for (std::uint64_t id : live) ASSERT_TRUE(e->Release(id).ok());
    ASSERT_TRUE(e->allocations().empty());
    for (std::size_t i = 0; i < e->nodes().size(); ++i) {
      ASSERT_EQ(e->FreeCpu(static_cast<int>(i)), initial_cpu[i]);
      for (std::size_t g = 0; g < e->nodes()[i].gpus.size(); ++g) {
        ASSERT_EQ(e->FreeMilli(static_cast<int>(i), static_cast<int>(g)), kMilliPerGpu);
        ASSERT_NE(e->Mode(static_cast<int>(i), static_cast<int>(g)), GpuMode::kTimeShared);
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Policies, EngineProperty, ::testing::Values("septa", "fgd", "bestfit", "random"));

}  // namespace
}  // namespace septa::gpu
