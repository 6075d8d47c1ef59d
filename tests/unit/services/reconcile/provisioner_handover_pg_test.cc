// Two provisioners (septad replicas: each its own store pool, leases, kube
// client, NOTIFY listener and metrics) on one PostgreSQL database and one
// host: every virtual cluster is reconciled by the replica holding its
// shard, and when that replica dies without releasing its leases, the other
// takes its virtual clusters over once the leases expire, within the TTL of
// the shared FakeClock. Every step waits for the event it needs.
#include <gtest/gtest.h>

#include <prometheus/registry.h>

#include "services/store/migration.h"
#include "services/store/notification_listener.h"
#include "services/store/pg_lease_store.h"
#include "services/store/pg_store.h"
#include "tests/support/fake_lease_store.h"
#include "tests/support/test_database.h"
#include "tests/unit/services/reconcile/bounded_wait.h"
#include "tests/unit/services/reconcile/provisioner_fixture.h"

namespace septa::reconcile {
namespace {

using namespace testing;  // the fixture's helpers
using namespace std::chrono_literals;

constexpr auto kTtl = 30s;
constexpr int kShards = 4;

// Reconcile calls of the provisioner counted in `registry`, whatever their result.
double ReconcileCount(prometheus::Registry& registry) {
  double n = 0;
  for (const auto& family : registry.Collect()) {
    if (family.name != "septa_reconcile_total") continue;
    for (const auto& metric : family.metric) n += metric.counter.value;
  }
  return n;
}

struct Replica {
  Replica(const std::string& url, const std::string& holder, const kube::ClientConfig& host_config, const Clock& clock,
          core::ControlPlanes& planes) {
    auto migrations = store::EmbeddedMigrations();
    EXPECT_TRUE(migrations.ok());
    store = std::make_unique<store::PgStore>(
        store::PgStoreOptions{.database_url = url, .pool_size = 4, .migrations = *migrations});
    kube::ClientOptions client_options;
    client_options.max_retries = 0;
    client_options.sleep = [](std::chrono::milliseconds) {};
    host = std::move(*kube::Client::Create(host_config, client_options));
    leases_db = std::make_unique<store::PgLeaseStore>(store::PgLeaseStoreOptions{.database_url = url});
    reachable = std::make_unique<core::PartitionableLeaseStore>(*leases_db);
    shards = std::make_unique<ShardLeases>(
        ShardLeasesOptions{.name = "provisioner", .holder = holder, .shards = kShards, .ttl = kTtl}, *reachable, clock);
    ProvisionerControllerOptions options;
    options.workers = 2;
    options.resync_interval = std::chrono::hours(24);  // what happens is what a trigger or a gained shard caused
    options.render.scheduler = tenancy::host::Scheduler::kKai;
    options.shards = shards.get();
    provisioner = std::make_unique<ProvisionerController>(options, *store, *host, &planes, clock, registry);
  }

  // Leases first (their first round decides what this replica holds), then the controller and its NOTIFYs.
  void Start(const std::string& url) {
    shards->Start();
    ASSERT_TRUE(shards->AwaitRounds(1, kBound));
    ASSERT_TRUE(provisioner->Start(kBound).ok());
    listener = std::make_unique<store::NotificationListener>(
        url, "septa_vclusters", [this](const std::string& key) { provisioner->EnqueuePayload(key); },
        [this] { provisioner->Resync(); });
  }

  // Death without a clean release: the leases can no longer be renewed or
  // released, and the replica's threads end with it.
  void Kill() {
    reachable->CutOff();
    listener.reset();
    provisioner.reset();
    shards.reset();
  }

  std::unique_ptr<store::PgStore> store;
  std::unique_ptr<kube::Client> host;
  std::unique_ptr<store::PgLeaseStore> leases_db;
  std::unique_ptr<core::PartitionableLeaseStore> reachable;
  std::unique_ptr<ShardLeases> shards;
  prometheus::Registry registry;
  std::unique_ptr<ProvisionerController> provisioner;
  std::unique_ptr<store::NotificationListener> listener;
};

class reconcileProvisionerHandover : public ::testing::Test, public ProvisionerFixture {
 protected:
  void SetUp() override {
    auto database = test::TestDatabase::CreateMigrated();
    ASSERT_TRUE(database.ok()) << database.status().ToString();
    database_ = std::move(*database);
    auto migrations = store::EmbeddedMigrations();
    ASSERT_TRUE(migrations.ok());
    seeding_ = std::make_unique<store::PgStore>(
        store::PgStoreOptions{.database_url = database_->url(), .pool_size = 2, .migrations = *migrations});
    ASSERT_NO_FATAL_FAILURE(StartHost(*seeding_));
    host_config_ = *kube::ParseKubeconfig(*sim_->AdminKubeconfig());
  }

  // Waits until `ok` holds, moving the clock by 100 ms steps (past a
  // reconcile's poll or backoff) at most `steps` times: far less than a
  // lease round, so no lease changes hands while it waits.
  bool Settles(Replica& replica, const std::function<bool()>& ok, int steps = 50) {
    for (int i = 0; i <= steps; ++i) {
      EXPECT_TRUE(replica.provisioner->AwaitIdle(kBound));
      if (ok()) return true;
      clock_.Advance(100ms);
      std::this_thread::sleep_for(2ms);  // lets a NOTIFY in flight reach the queue
    }
    return false;
  }

  bool AllReady(const std::vector<std::string>& vclusters) {
    for (const auto& vc : vclusters) {
      if (!IsReadyIn(*seeding_, vc)) return false;
    }
    return true;
  }

  std::unique_ptr<test::TestDatabase> database_;
  std::unique_ptr<store::PgStore> seeding_;  // the users' writes
  kube::ClientConfig host_config_;
};

TEST_F(reconcileProvisionerHandover, TheOtherReplicaTakesOverTheVirtualClustersOfADeadOneWithinTheTtl) {
  const TimePoint t0 = clock_.Now();
  auto a = std::make_unique<Replica>(database_->url(), "replica-a", host_config_, clock_, planes_);
  ASSERT_NO_FATAL_FAILURE(a->Start(database_->url()));
  // B starts 2 s later: its rounds (every TTL/3) fall 2 s after A's.
  clock_.Advance(2s);
  const TimePoint b0 = clock_.Now();
  Replica b(database_->url(), "replica-b", host_config_, clock_, planes_);
  ASSERT_NO_FATAL_FAILURE(b.Start(database_->url()));
  ASSERT_EQ(a->shards->Held().size(), static_cast<std::size_t>(kShards)) << "A started first and took every shard";
  ASSERT_TRUE(b.shards->Held().empty());

  // Every virtual cluster is provisioned by A alone; B is told of each (its NOTIFYs) and drops them.
  std::vector<std::string> first = {"alpha", "beta", "gamma"};
  for (int i = 0; i < 3; ++i) ASSERT_NO_FATAL_FAILURE(SeedVCluster(*seeding_, first[i], i));
  ASSERT_TRUE(Settles(*a, [&] { return AllReady(first); }));
  ASSERT_TRUE(b.provisioner->AwaitIdle(kBound));
  EXPECT_GT(ReconcileCount(a->registry), 0);
  EXPECT_EQ(ReconcileCount(b.registry), 0) << "B reconciled a virtual cluster A holds";
  // alpha's own objects (its node is shared with the virtual clusters to come).
  auto alpha_versions = HostVersions("alpha");
  alpha_versions.erase("nodes/a100-0");

  // A dies before its second round (Settles moved the clock less than
  // TTL/3), without releasing its leases: B waits them out.
  const TimePoint died = clock_.Now();
  a->Kill();
  a.reset();
  ASSERT_NO_FATAL_FAILURE(SeedVCluster(*seeding_, "delta", 3));
  const std::string delta_ns = tenancy::host::HostNamespaceName("ann", "delta");
  // The leases run until A's last renewal (at t0) + TTL. B's rounds are due
  // every TTL/3 from b0; the clock is moved to each exactly.
  ASSERT_LT(clock_.Now(), t0 + kTtl / 3);
  std::uint64_t rounds = b.shards->rounds();
  for (int round = 1; round <= 2; ++round) {
    clock_.Advance(b0 + round * kTtl / 3 - clock_.Now());
    ASSERT_TRUE(b.shards->AwaitRounds(++rounds, kBound));
    ASSERT_TRUE(b.shards->Held().empty()) << "B took a lease A still holds, round " << round;
  }
  ASSERT_TRUE(b.provisioner->AwaitIdle(kBound));
  EXPECT_FALSE(IsReadyIn(*seeding_, "delta"));
  EXPECT_TRUE(Get(kube::kNamespaces, "", delta_ns).is_null()) << "nobody provisions while the leases run";
  EXPECT_EQ(ReconcileCount(b.registry), 0);

  // t0 + TTL, before B's next regular round (b0 + TTL): the leases expired,
  // B looks again at that moment, takes every shard, resyncs their virtual
  // clusters and provisions the new one.
  clock_.Advance(t0 + kTtl - clock_.Now());
  ASSERT_TRUE(b.shards->AwaitRounds(++rounds, kBound));
  EXPECT_EQ(b.shards->Held().size(), static_cast<std::size_t>(kShards));
  EXPECT_LE(clock_.Now() - died, kTtl) << "taken over within the TTL of A's death";
  ASSERT_TRUE(Settles(b, [&] { return IsReadyIn(*seeding_, "delta"); }));
  EXPECT_EQ(HostObjectsOf("ann", "delta").size(), 9u);
  EXPECT_TRUE(AllReady(first));
  EXPECT_GT(ReconcileCount(b.registry), 0);
  auto alpha_now = HostVersions("alpha");
  alpha_now.erase("nodes/a100-0");
  EXPECT_EQ(alpha_now, alpha_versions) << "B's resync of A's converged virtual clusters wrote nothing";

  // B now acts on every change: a delete goes all the way.
  ASSERT_NO_FATAL_FAILURE(UpdateVCluster(
      *seeding_, "beta", [](tenancy::VirtualCluster& vc) { vc.state = tenancy::VirtualClusterState::kDeleting; }));
  ASSERT_TRUE(Settles(b, [&] { return !StoredVCluster(*seeding_, "beta").has_value(); }));
  EXPECT_EQ(HostObjectsOf("ann", "beta"), std::vector<std::string>{});
}

}  // namespace
}  // namespace septa::reconcile
