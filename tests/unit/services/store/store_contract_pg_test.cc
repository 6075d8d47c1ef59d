#include "services/store/pg_store.h"
#include "tests/support/test_database.h"
#include "tests/unit/services/store/capacity_contract.h"
#include "tests/unit/services/store/usage_contract.h"

namespace septa::store {

// PgStore on a fresh, migrated database of the test run's PostgreSQL.
struct PgStoreEnv {
  Status SetUp() {
    auto database = test::TestDatabase::CreateMigrated();
    if (!database.ok()) return database.status();
    database_ = std::move(*database);
    auto migrations = EmbeddedMigrations();
    if (!migrations.ok()) return migrations.status();
    // Generous retry bound: ConcurrentReadModifyWriteLosesNoUpdate makes
    // every thread collide on purpose.
    store_ = std::make_unique<PgStore>(PgStoreOptions{
        .database_url = database_->url(), .pool_size = 4, .max_attempts = 50, .migrations = *std::move(migrations)});
    return Status::Ok();
  }
  core::Store& store() { return *store_; }

  std::unique_ptr<test::TestDatabase> database_;
  std::unique_ptr<PgStore> store_;  // destroyed first: its connections close before the drop
};

}  // namespace septa::store

namespace septa::core::contract {
INSTANTIATE_TYPED_TEST_SUITE_P(pg, StoreContract, ::testing::Types<store::PgStoreEnv>);
INSTANTIATE_TYPED_TEST_SUITE_P(pg, CapacityContract, ::testing::Types<store::PgStoreEnv>);
INSTANTIATE_TYPED_TEST_SUITE_P(pg, UsageContract, ::testing::Types<store::PgStoreEnv>);
}  // namespace septa::core::contract
