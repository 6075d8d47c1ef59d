#include "services/store/pg_virtual_object_store.h"
#include "tests/support/test_database.h"
#include "tests/unit/services/store/virtual_object_store_contract.h"

namespace septa::store {

// PgVirtualObjectStore on a fresh, migrated database of the test run's PostgreSQL.
struct PgVirtualObjectStoreEnv {
  Status SetUp() {
    auto database = test::TestDatabase::CreateMigrated();
    if (!database.ok()) return database.status();
    database_ = std::move(*database);
    store_ = std::make_unique<PgVirtualObjectStore>(PgVirtualObjectStoreOptions{.database_url = database_->url()});
    return Status::Ok();
  }
  core::VirtualObjectStore& store() { return *store_; }

  std::unique_ptr<test::TestDatabase> database_;
  std::unique_ptr<PgVirtualObjectStore> store_;  // destroyed first: its connections close before the drop
};

}  // namespace septa::store

namespace septa::core::contract {
INSTANTIATE_TYPED_TEST_SUITE_P(pg, VirtualObjectStoreContract, ::testing::Types<store::PgVirtualObjectStoreEnv>);
}  // namespace septa::core::contract
