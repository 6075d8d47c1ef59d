#include "services/store/pg_lease_store.h"
#include "tests/support/test_database.h"
#include "tests/unit/services/reconcile/lease_store_contract.h"

namespace septa::reconcile::contract {

// PgLeaseStore on a fresh, migrated database of the test run's PostgreSQL.
struct PgLeaseStoreEnv {
  Status SetUp() {
    auto database = test::TestDatabase::CreateMigrated();
    if (!database.ok()) return database.status();
    database_ = std::move(*database);
    // As many connections as the racing test has holders: they race in the database.
    store_ = std::make_unique<store::PgLeaseStore>(
        store::PgLeaseStoreOptions{.database_url = database_->url(), .pool_size = 6});
    return Status::Ok();
  }
  core::LeaseStore& store() { return *store_; }

  std::unique_ptr<test::TestDatabase> database_;
  std::unique_ptr<store::PgLeaseStore> store_;  // destroyed first: its connections close before the drop
};

INSTANTIATE_TYPED_TEST_SUITE_P(pg, LeaseStoreContract, ::testing::Types<PgLeaseStoreEnv>);

}  // namespace septa::reconcile::contract
