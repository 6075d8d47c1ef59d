// The provisioner on PostgreSQL, triggered only by the database: every
// committed change to a virtual cluster row is a NOTIFY on septa_vclusters
// (migrations/0008_vcluster_notify.sql) that the listener hands to the
// controller. A virtual cluster inserted turns READY with its host objects,
// a second pass writes nothing, a resize is applied in place, and DELETING
// ends with nothing on the host and the row and reservation gone.
#include <gtest/gtest.h>

#include "services/store/migration.h"
#include "services/store/notification_listener.h"
#include "services/store/pg_store.h"
#include "tests/support/test_database.h"
#include "tests/unit/services/reconcile/provisioner_fixture.h"

namespace septa::reconcile {
namespace {

using namespace testing;  // the fixture's resources and json
using namespace std::chrono_literals;
using tenancy::VirtualCluster;
using tenancy::VirtualClusterState;

class reconcileProvisionerPg : public ::testing::Test, public ProvisionerFixture {
 protected:
  void SetUp() override {
    auto database = test::TestDatabase::CreateMigrated();
    ASSERT_TRUE(database.ok()) << database.status().ToString();
    database_ = std::move(*database);
    auto migrations = store::EmbeddedMigrations();
    ASSERT_TRUE(migrations.ok());
    store_ = std::make_unique<store::PgStore>(
        store::PgStoreOptions{.database_url = database_->url(), .pool_size = 4, .migrations = *migrations});
    ASSERT_NO_FATAL_FAILURE(StartHost(*store_));
    ASSERT_NO_FATAL_FAILURE(StartProvisioner(*store_));
    listener_ = std::make_unique<store::NotificationListener>(
        database_->url(), "septa_vclusters", [this](const std::string& key) { provisioner_->EnqueuePayload(key); },
        [this] { provisioner_->Resync(); });
  }
  void TearDown() override {
    listener_.reset();
    provisioner_.reset();
  }

  std::unique_ptr<test::TestDatabase> database_;
  std::unique_ptr<store::PgStore> store_;
  std::unique_ptr<store::NotificationListener> listener_;
};

TEST_F(reconcileProvisionerPg, NotifyDrivesCreateResizeAndDelete) {
  ASSERT_NO_FATAL_FAILURE(SeedVCluster(*store_, "train", 0));
  ASSERT_TRUE(Eventually([&] { return IsReadyIn(*store_, "train"); })) << "the insert's NOTIFY provisions it";
  const std::string ns = tenancy::host::HostNamespaceName("ann", "train");
  EXPECT_EQ(StoredVCluster(*store_, "train")->host_namespace, ns);
  EXPECT_EQ(Get(kube::kResourceQuotas, ns, "septa-quota")["spec"]["hard"].value("pods", ""), "50");
  EXPECT_EQ(HostObjectsOf("ann", "train").size(), 9u);

  // Nothing changed: a full resync writes neither the host nor the row.
  const auto versions = HostVersions("train");
  const std::int64_t row_version = StoredVCluster(*store_, "train")->version;
  provisioner_->Resync();
  ASSERT_TRUE(provisioner_->AwaitIdle(10s));
  EXPECT_EQ(HostVersions("train"), versions);
  EXPECT_EQ(StoredVCluster(*store_, "train")->version, row_version);

  ASSERT_NO_FATAL_FAILURE(UpdateVCluster(*store_, "train", [](VirtualCluster& vc) {
    vc.quota.pods = 80;
    ++vc.generation;
  }));
  ASSERT_TRUE(Eventually([&] {
    auto vc = StoredVCluster(*store_, "train");
    return Get(kube::kResourceQuotas, ns, "septa-quota")["spec"]["hard"].value("pods", "") == "80" &&
           ConditionOf(*vc, "QuotaReady")->observed_generation == 2;
  }));

  ASSERT_NO_FATAL_FAILURE(
      UpdateVCluster(*store_, "train", [](VirtualCluster& vc) { vc.state = VirtualClusterState::kDeleting; }));
  ASSERT_TRUE(Eventually([&] { return !StoredVCluster(*store_, "train").has_value(); }));
  EXPECT_EQ(HostObjectsOf("ann", "train"), std::vector<std::string>{});
  EXPECT_FALSE(planes_.Has("ann", "train"));
  bool released = false;
  ASSERT_TRUE(store_
                  ->Transact(core::TxMode::kReadOnly,
                             [&](core::Tx& tx) -> Status {
                               released = tx.Reservations().Get("ann", "train").status().code() == Code::kNotFound;
                               return Status::Ok();
                             })
                  .ok());
  EXPECT_TRUE(released);
}

// Sleep and wake with sleep_reservation release, on PostgreSQL's rows and
// exclusion constraints: the reservation is deleted at sleep and placed
// again through the ledger on wake.
TEST_F(reconcileProvisionerPg, NotifyDrivesSleepReleaseAndWakeReReserve) {
  listener_.reset();
  provisioner_.reset();
  sleep_reservation_ = SleepReservation::kRelease;
  ASSERT_NO_FATAL_FAILURE(StartProvisioner(*store_));
  listener_ = std::make_unique<store::NotificationListener>(
      database_->url(), "septa_vclusters", [this](const std::string& key) { provisioner_->EnqueuePayload(key); },
      [this] { provisioner_->Resync(); });
  auto reservation = [&]() -> std::optional<tenancy::Reservation> {
    std::optional<tenancy::Reservation> out;
    EXPECT_TRUE(store_
                    ->Transact(core::TxMode::kReadOnly,
                               [&](core::Tx& tx) -> Status {
                                 auto r = tx.Reservations().Get("ann", "nap");
                                 if (r.ok()) out = *r;
                                 return Status::Ok();
                               })
                    .ok());
    return out;
  };
  ASSERT_NO_FATAL_FAILURE(SeedVCluster(*store_, "nap", 2));
  ASSERT_TRUE(Eventually([&] { return IsReadyIn(*store_, "nap"); }));
  ASSERT_TRUE(reservation());

  ASSERT_NO_FATAL_FAILURE(UpdateVCluster(*store_, "nap", [](VirtualCluster& vc) {
    vc.state = VirtualClusterState::kSleeping;
    ++vc.generation;
  }));
  ASSERT_TRUE(Eventually([&] {
    auto vc = StoredVCluster(*store_, "nap");
    const tenancy::Condition* sleeping = ConditionOf(*vc, "Sleeping");
    return sleeping && sleeping->status == tenancy::ConditionStatus::kTrue && !reservation();
  }));
  EXPECT_EQ(ConditionOf(*StoredVCluster(*store_, "nap"), "CapacityReady")->reason, "ReleasedWhileSleeping");
  EXPECT_TRUE(planes_.Has("ann", "nap"));

  ASSERT_NO_FATAL_FAILURE(UpdateVCluster(*store_, "nap", [](VirtualCluster& vc) {
    vc.state = VirtualClusterState::kProvisioning;
    ++vc.generation;
  }));
  ASSERT_TRUE(Eventually([&] { return IsReadyIn(*store_, "nap") && reservation().has_value(); }));
  EXPECT_EQ(reservation()->gpus.size(), 1u);
  EXPECT_EQ(ConditionOf(*StoredVCluster(*store_, "nap"), "Sleeping")->reason, "Awake");
}

// Issue 28 L1: a tenant's suspension and resumption reach the provisioner
// through the database alone: the trigger of migrations/0015 tells each of
// its virtual clusters on septa_vclusters, whose row itself does not change.
TEST_F(reconcileProvisionerPg, NotifyOfATenantsSuspensionSleepsItsVirtualClustersAndOfItsResumptionWakesThem) {
  listener_.reset();
  provisioner_.reset();
  sleep_reservation_ = SleepReservation::kRelease;
  ASSERT_NO_FATAL_FAILURE(StartProvisioner(*store_));
  listener_ = std::make_unique<store::NotificationListener>(
      database_->url(), "septa_vclusters", [this](const std::string& key) { provisioner_->EnqueuePayload(key); },
      [this] { provisioner_->Resync(); });
  ASSERT_NO_FATAL_FAILURE(SeedVCluster(*store_, "nap", 2));
  ASSERT_TRUE(Eventually([&] { return IsReadyIn(*store_, "nap"); }));
  const std::int64_t generation = StoredVCluster(*store_, "nap")->generation;
  auto set_state = [&](core::TenantState state) {
    ASSERT_TRUE(store_
                    ->Transact(core::TxMode::kReadWrite,
                               [&](core::Tx& tx) -> Status {
                                 auto ann = tx.Tenants().Get("ann");
                                 SEPTA_RETURN_IF_ERROR(ann);
                                 core::Tenant next = *ann;
                                 next.state = state;
                                 next.version = ann->version + 1;
                                 return tx.Tenants().Update(next, ann->version);
                               })
                    .ok());
  };
  auto condition = [&](const char* type) {
    auto vc = StoredVCluster(*store_, "nap");
    const tenancy::Condition* c = vc ? ConditionOf(*vc, type) : nullptr;
    return c ? std::string(tenancy::ConditionStatusName(c->status)) + " " + c->reason : std::string();
  };

  ASSERT_NO_FATAL_FAILURE(set_state(core::TenantState::kSuspended));
  ASSERT_TRUE(Eventually([&] {
    return condition("Sleeping") == "True TenantSuspended" &&
           condition("CapacityReady") == "False ReleasedWhileSleeping";
  })) << condition("Sleeping");
  EXPECT_EQ(StoredVCluster(*store_, "nap")->state, VirtualClusterState::kReady);
  EXPECT_EQ(StoredVCluster(*store_, "nap")->generation, generation);

  ASSERT_NO_FATAL_FAILURE(set_state(core::TenantState::kActive));
  ASSERT_TRUE(Eventually([&] {
    return condition("Sleeping") == "False Awake" && condition("CapacityReady").starts_with("True ");
  })) << condition("Sleeping")
      << " / " << condition("CapacityReady");
}

}  // namespace
}  // namespace septa::reconcile
