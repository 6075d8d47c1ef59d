// Creators racing for the last free GPU capacity through two septad
// replicas (two CapacityLedgers) on one PostgreSQL database: every winner's
// capacity is on concrete GPUs nobody else holds, checked against the rows;
// and creators and resizers racing for the last of a tenant quota: never
// more than the quota is held.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <latch>
#include <map>
#include <set>
#include <thread>

#include "common/clock.h"
#include "services/core/capacity_ledger.h"
#include "services/core/virtual_cluster_service.h"
#include "services/store/pg_store.h"
#include "tests/support/test_database.h"

namespace septa::core {
namespace {

using tenancy::VirtualCluster;

int Profile(const char* name) { return gpu::Catalog::Default().Find("H100-80GB")->ProfileIndex(name); }

RequestContext Owner(const std::string& tenant) {
  RequestContext ctx;
  ctx.principal.tenant = tenant;
  ctx.principal.role = Role::kOwner;
  ctx.request_id = "race";
  return ctx;
}

class VirtualClusterRaceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto database = test::TestDatabase::CreateMigrated();
    ASSERT_TRUE(database.ok()) << database.status().ToString();
    database_ = std::move(*database);
    auto migrations = store::EmbeddedMigrations();
    ASSERT_TRUE(migrations.ok());
    store_ = std::make_unique<store::PgStore>(store::PgStoreOptions{
        .database_url = database_->url(), .pool_size = 8, .max_attempts = 50, .migrations = *std::move(migrations)});
    // Two H100 nodes of two MIG GPUs (3g.40gb@0 + 2g.20gb@4 + 1g.10gb@6):
    // four 3g.40gb instances; two nodes of four whole A100s.
    const Status seeded = store_->Transact(TxMode::kReadWrite, [&](Tx& tx) -> Status {
      for (const char* t : {"iso-a", "iso-b"}) SEPTA_RETURN_IF_ERROR(tx.Tenants().Insert(TenantRow(t, "isolated")));
      for (const char* t : {"ded-a", "ded-b"}) SEPTA_RETURN_IF_ERROR(tx.Tenants().Insert(TenantRow(t, "dedicated")));
      for (const char* name : {"h100-0", "h100-1"}) {
        gpu::InventoryNode n = Node(name);
        for (int g = 0; g < 2; ++g) {
          n.gpus.push_back({"H100-80GB",
                            g,
                            std::string(name) + "-" + std::to_string(g),
                            true,
                            {{Profile("3g.40gb"), 0}, {Profile("2g.20gb"), 4}, {Profile("1g.10gb"), 6}}});
        }
        SEPTA_RETURN_IF_ERROR(tx.Inventory().PutNode(n, clock_.Now()));
      }
      for (const char* name : {"a100-0", "a100-1"}) {
        gpu::InventoryNode n = Node(name);
        for (int g = 0; g < 4; ++g)
          n.gpus.push_back({"A100-80GB", g, std::string(name) + std::to_string(g), false, {}});
        SEPTA_RETURN_IF_ERROR(tx.Inventory().PutNode(n, clock_.Now()));
      }
      return Status::Ok();
    });
    ASSERT_TRUE(seeded.ok()) << seeded.ToString();
  }

  static Tenant TenantRow(const std::string& name, const std::string& tier) {
    Tenant t;
    t.name = name;
    t.trust_tier = tier;
    t.version = 1;
    return t;
  }
  // A dedicated virtual cluster of `count` whole A100s.
  static VirtualCluster WholeA100s(const std::string& name, int count) {
    VirtualCluster vc;
    vc.name = name;
    vc.capacity.tier = gpu::Tier::kDedicated;
    vc.capacity.model = "A100-80GB";
    vc.capacity.count = count;
    vc.quota.pods = 10;
    return vc;
  }
  static gpu::InventoryNode Node(const std::string& name) {
    gpu::InventoryNode n;
    n.name = name;
    n.cpu_milli = 64000;
    n.memory_mib = 1 << 19;
    return n;
  }

  // `creators` threads, alternating between two replicas, each create one
  // virtual cluster of `make(i)` for tenant `tenant(i)`; returns how many won.
  int Race(int creators, const std::function<std::string(int)>& tenant,
           const std::function<VirtualCluster(int)>& make) {
    CapacityLedger ledger_a{gpu::Catalog::Default()}, ledger_b{gpu::Catalog::Default()};
    VirtualClusterService replica_a(*store_, clock_, ledger_a, gpu::Catalog::Default());
    VirtualClusterService replica_b(*store_, clock_, ledger_b, gpu::Catalog::Default());
    std::atomic<int> won{0};
    std::vector<std::thread> threads;
    for (int i = 0; i < creators; ++i) {
      threads.emplace_back([&, i] {
        auto r = (i % 2 ? replica_a : replica_b).Create(Owner(tenant(i)), tenant(i), make(i), "");
        if (r.ok()) {
          ++won;
        } else {
          EXPECT_EQ(r.status().code(), Code::kResourceExhausted) << r.status().ToString();
        }
      });
    }
    for (auto& t : threads) t.join();
    return won;
  }

  std::vector<tenancy::Reservation> Rows() {
    std::vector<tenancy::Reservation> rows;
    const Status read = store_->Transact(TxMode::kReadOnly, [&](Tx& tx) -> Status {
      auto all = tx.Reservations().List();
      SEPTA_RETURN_IF_ERROR(all);
      rows = *all;
      return Status::Ok();
    });
    EXPECT_TRUE(read.ok()) << read.ToString();
    return rows;
  }

  SystemClock clock_;
  std::unique_ptr<test::TestDatabase> database_;
  std::unique_ptr<store::PgStore> store_;
};

TEST_F(VirtualClusterRaceTest, SixtyFourCreatorsForFourMigInstancesBookEachOnce) {
  const int won = Race(
      64, [](int i) { return i % 2 ? "iso-a" : "iso-b"; },
      [](int i) {
        VirtualCluster vc;
        vc.name = "mig-" + std::to_string(i);
        vc.capacity.tier = gpu::Tier::kIsolated;
        vc.capacity.mig = {{"3g.40gb", 1, ""}};
        return vc;
      });
  EXPECT_EQ(won, 4);
  std::set<std::tuple<std::string, int, int>> instances;
  int rows = 0;
  for (const auto& r : Rows()) {
    ++rows;
    for (const auto& m : r.mig) EXPECT_TRUE(instances.insert({m.node, m.gpu, m.start}).second) << m.node;
  }
  EXPECT_EQ(rows, 4);
  EXPECT_EQ(instances.size(), 4u);
}

TEST_F(VirtualClusterRaceTest, SixtyFourCreatorsForEightWholeGpusBookEachOnce) {
  // Three GPUs each: at most two creators fit on the eight A100s.
  const int won = Race(
      64, [](int i) { return i % 2 ? "ded-a" : "ded-b"; },
      [](int i) {
        VirtualCluster vc;
        vc.name = "gpus-" + std::to_string(i);
        vc.capacity.tier = gpu::Tier::kDedicated;
        vc.capacity.model = "A100-80GB";
        vc.capacity.count = 3;
        return vc;
      });
  EXPECT_EQ(won, 2);
  std::map<std::pair<std::string, int>, std::string> holder;
  for (const auto& r : Rows()) {
    EXPECT_EQ(r.gpus.size(), 3u);
    for (const auto& g : r.gpus) {
      EXPECT_TRUE(holder.emplace(std::pair{g.node, g.gpu}, r.vcluster).second) << g.node << " GPU " << g.gpu;
    }
  }
}

TEST_F(VirtualClusterRaceTest, SixtyFourCreatorsNeverTakeATenantPastItsQuota) {
  // Eight free A100s, but the tenant may hold 3 GPU-equivalents.
  Tenant limited = TenantRow("ded-q", "dedicated");
  limited.quota.gpu_milli = 3000;
  ASSERT_TRUE(store_->Transact(TxMode::kReadWrite, [&](Tx& tx) { return tx.Tenants().Insert(limited); }).ok());
  const int won = Race(
      64, [](int) { return "ded-q"; },
      [](int i) {
        VirtualCluster vc;
        vc.name = "q-" + std::to_string(i);
        vc.capacity.tier = gpu::Tier::kDedicated;
        vc.capacity.count = 1;
        return vc;
      });
  EXPECT_EQ(won, 3);
  int held = 0;
  for (const auto& r : Rows()) {
    if (r.tenant == "ded-q") held += static_cast<int>(r.gpus.size());
  }
  EXPECT_EQ(held, 3);
}

// A replica's engine is current only at an epoch a transaction compared it
// with: an update that reserves nothing must not mark it current at a newer
// epoch, or it misses what another replica reserved meanwhile (and offers
// that capacity again, which the database refuses as a conflict).
TEST_F(VirtualClusterRaceTest, AnUpdateThatReservesNothingDoesNotHideAnotherReplicasReservation) {
  CapacityLedger ledger_a{gpu::Catalog::Default()}, ledger_b{gpu::Catalog::Default()};
  VirtualClusterService a(*store_, clock_, ledger_a, gpu::Catalog::Default());
  VirtualClusterService b(*store_, clock_, ledger_b, gpu::Catalog::Default());
  ASSERT_TRUE(a.Create(Owner("ded-a"), "ded-a", WholeA100s("first", 4), "").ok());   // A's engine is built
  ASSERT_TRUE(b.Create(Owner("ded-b"), "ded-b", WholeA100s("second", 4), "").ok());  // the other 4, through B
  VirtualCluster limits;
  limits.quota.pods = 20;
  ASSERT_TRUE(a.Update(Owner("ded-a"), "ded-a", "first", limits, {"quota"}, "").ok());
  auto third = a.Create(Owner("ded-a"), "ded-a", WholeA100s("third", 1), "");
  ASSERT_FALSE(third.ok());
  EXPECT_EQ(third.status().code(), Code::kResourceExhausted) << third.status().ToString();
}

// A store whose next transaction loses a race once: its first attempt
// runs the body and is rolled back, `between` runs, then the body runs again.
class FirstAttemptLost final : public Store {
 public:
  FirstAttemptLost(Store& inner, std::function<void()> between) : inner_(inner), between_(std::move(between)) {}
  Status Transact(TxMode mode, const std::function<Status(Tx&)>& body) override {
    const Status first = inner_.Transact(mode, [&](Tx& tx) -> Status {
      SEPTA_RETURN_IF_ERROR(body(tx));
      return Aborted("could not serialize access (injected)");
    });
    if (first.code() != Code::kAborted) return first;
    between_();
    return inner_.Transact(mode, body);
  }
  Status Ready() override { return inner_.Ready(); }
  void WatchRevocations(std::function<void(const Revocation&)> on_revocation) override {
    inner_.WatchRevocations(std::move(on_revocation));
  }

 private:
  Store& inner_;
  std::function<void()> between_;
};

// What a lost attempt compared says nothing about the rows its retry sees:
// a retry that reserves nothing must not seal the engine as current.
TEST_F(VirtualClusterRaceTest, ARetryThatReservesNothingDoesNotSealWhatALostAttemptCompared) {
  CapacityLedger ledger_a{gpu::Catalog::Default()}, ledger_b{gpu::Catalog::Default()};
  VirtualClusterService a(*store_, clock_, ledger_a, gpu::Catalog::Default());
  VirtualClusterService b(*store_, clock_, ledger_b, gpu::Catalog::Default());
  ASSERT_TRUE(a.Create(Owner("ded-a"), "ded-a", WholeA100s("first", 4), "").ok());  // A's engine is built
  FirstAttemptLost lossy(*store_, [&] {
    auto second = b.Create(Owner("ded-b"), "ded-b", WholeA100s("second", 4), "");  // the other 4, through B
    ASSERT_TRUE(second.ok()) << second.status().ToString();
  });
  int attempts = 0;
  const Status st =
      ledger_a.Transact(lossy, TxMode::kReadWrite, [&](Tx& tx, CapacityLedger::Session& session) -> Status {
        if (++attempts == 1) return session.Engine(tx).status();  // compared, then lost
        return Status::Ok();                                      // the retry reserves nothing
      });
  ASSERT_TRUE(st.ok()) << st.ToString();
  ASSERT_EQ(attempts, 2);
  auto third = a.Create(Owner("ded-a"), "ded-a", WholeA100s("third", 1), "");
  ASSERT_FALSE(third.ok());
  EXPECT_EQ(third.status().code(), Code::kResourceExhausted) << third.status().ToString();
}

// Resizes that change only workload limits reserve nothing, so no capacity
// row orders them: the quota holds through SERIALIZABLE alone. Each resizer
// is a replica of its own (a ledger orders the reservations of one), all
// released at once; under REPEATABLE READ all eight pass.
TEST_F(VirtualClusterRaceTest, ConcurrentWorkloadResizesNeverTakeATenantPastItsQuota) {
  Tenant limited = TenantRow("ded-q", "dedicated");
  limited.quota.cpu_milli = 4000;
  ASSERT_TRUE(store_->Transact(TxMode::kReadWrite, [&](Tx& tx) { return tx.Tenants().Insert(limited); }).ok());
  constexpr int kClusters = 8;  // 250 milli-CPU each: 2000 of 4000 used
  std::vector<std::unique_ptr<CapacityLedger>> ledgers;
  std::vector<std::unique_ptr<VirtualClusterService>> replicas;
  for (int i = 0; i < kClusters; ++i) {
    ledgers.push_back(std::make_unique<CapacityLedger>(gpu::Catalog::Default()));
    replicas.push_back(
        std::make_unique<VirtualClusterService>(*store_, clock_, *ledgers.back(), gpu::Catalog::Default()));
    VirtualCluster vc;
    vc.name = "w-" + std::to_string(i);
    vc.capacity.tier = gpu::Tier::kDedicated;
    vc.capacity.count = 1;
    vc.quota.cpu_milli = 250;
    auto created = replicas[0]->Create(Owner("ded-q"), "ded-q", vc, "");
    ASSERT_TRUE(created.ok()) << created.status().ToString();
  }
  // Each grows its own to 750: 500 more each, room for four.
  std::atomic<int> won{0};
  std::latch start(kClusters);
  {
    std::vector<std::jthread> resizers;
    for (int i = 0; i < kClusters; ++i) {
      resizers.emplace_back([&, i] {
        VirtualCluster patch;
        patch.quota.cpu_milli = 750;
        start.arrive_and_wait();
        auto r = replicas[i]->Update(Owner("ded-q"), "ded-q", "w-" + std::to_string(i), patch, {"quota.cpu_milli"}, "");
        if (r.ok()) {
          ++won;
        } else {
          EXPECT_EQ(r.status().code(), Code::kResourceExhausted) << r.status().ToString();
        }
      });
    }
  }
  EXPECT_EQ(won, 4);
  std::int64_t total = 0;
  const Status read = store_->Transact(TxMode::kReadOnly, [&](Tx& tx) -> Status {
    VirtualClusterQuery query;
    query.tenant = query.after_tenant = "ded-q";
    auto rows = tx.VirtualClusters().List(query);
    SEPTA_RETURN_IF_ERROR(rows);
    total = 0;
    for (const auto& vc : *rows) total += vc.quota.cpu_milli;
    return Status::Ok();
  });
  ASSERT_TRUE(read.ok()) << read.ToString();
  EXPECT_EQ(total, 4000);
}

TEST_F(VirtualClusterRaceTest, SixteenCreatorsOfAProfileNoLayoutHasReLayOutEachGpuOnce) {
  // A GPU takes one 4g.40gb, and only once re-laid out: four creators win,
  // each on its own GPU, each instance on a layout target written with it.
  const int won = Race(
      16, [](int i) { return i % 2 ? "iso-a" : "iso-b"; },
      [](int i) {
        VirtualCluster vc;
        vc.name = "relaid-" + std::to_string(i);
        vc.capacity.tier = gpu::Tier::kIsolated;
        vc.capacity.mig = {{"4g.40gb", 1, ""}};
        return vc;
      });
  EXPECT_EQ(won, 4);
  std::vector<tenancy::MigLayoutTarget> targets;
  ASSERT_TRUE(store_
                  ->Transact(TxMode::kReadOnly,
                             [&](Tx& tx) -> Status {
                               auto all = tx.Inventory().ListLayoutTargets();
                               SEPTA_RETURN_IF_ERROR(all);
                               targets = *all;
                               return Status::Ok();
                             })
                  .ok());
  ASSERT_EQ(targets.size(), 4u);
  std::set<std::pair<std::string, int>> gpus;
  for (const auto& r : Rows()) {
    ASSERT_EQ(r.mig.size(), 1u);
    const auto& m = r.mig[0];
    EXPECT_EQ(m.profile, "4g.40gb");
    EXPECT_TRUE(gpus.insert({m.node, m.gpu}).second) << m.node << " GPU " << m.gpu;
    auto target =
        std::find_if(targets.begin(), targets.end(), [&](const auto& t) { return t.node == m.node && t.gpu == m.gpu; });
    ASSERT_NE(target, targets.end()) << m.node << " GPU " << m.gpu;
    EXPECT_NE(std::find(target->layout.begin(), target->layout.end(),
                        gpu::MigInstance{gpu::Catalog::Default().Find("H100-80GB")->ProfileIndex("4g.40gb"), m.start}),
              target->layout.end());
  }
  EXPECT_EQ(gpus.size(), 4u);
  // Every target of a node names the node's one config.
  for (const auto& a : targets) {
    for (const auto& b : targets) {
      if (a.node == b.node) {
        EXPECT_EQ(a.mig_config, b.mig_config);
      }
    }
  }
}

TEST_F(VirtualClusterRaceTest, ARefusedReLayoutWritesNoTarget) {
  CapacityLedger ledger{gpu::Catalog::Default()};
  VirtualClusterService service(*store_, clock_, ledger, gpu::Catalog::Default());
  VirtualCluster vc;
  vc.name = "too-big";
  vc.capacity.tier = gpu::Tier::kIsolated;
  vc.capacity.mig = {{"4g.40gb", 5, ""}};  // four GPUs, one 4g.40gb each
  auto refused = service.Create(Owner("iso-a"), "iso-a", vc, "");
  ASSERT_EQ(refused.status().code(), Code::kResourceExhausted);
  EXPECT_EQ(refused.status().violations().at(0).description,
            "5 × 4g.40gb requested, 0 free; 4 more would be free after re-laying out h100-0 GPU 0 and 1, h100-1 GPU 0 "
            "and 1, which run nothing");
  EXPECT_TRUE(Rows().empty());
  std::int64_t targets = -1;
  ASSERT_TRUE(store_
                  ->Transact(TxMode::kReadOnly,
                             [&](Tx& tx) -> Status {
                               auto all = tx.Inventory().ListLayoutTargets();
                               SEPTA_RETURN_IF_ERROR(all);
                               targets = static_cast<std::int64_t>(all->size());
                               return Status::Ok();
                             })
                  .ok());
  EXPECT_EQ(targets, 0);
}

}  // namespace
}  // namespace septa::core
