#include <pqxx/pqxx>

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

  // The rows the credentials API writes, with the tenant and virtual cluster
  // their foreign key needs.
  Status RecordCredential(const core::VirtualClusterKey& key, const std::string& serial) {
    pqxx::connection c(database_->url());
    pqxx::work tx(c);
    tx.exec_params(
        "INSERT INTO tenants (name, trust_tier, state, create_time, update_time, version) "
        "VALUES ($1, 'isolated', 'active', now(), now(), 1) ON CONFLICT DO NOTHING",
        key.tenant);
    tx.exec_params(
        "INSERT INTO virtual_clusters (tenant, name, capacity_tier, capacity, queue_priority, "
        "queue_over_quota_weight, state, generation, version, create_time, update_time) "
        "VALUES ($1, $2, 'isolated', '{}', 100, 1, 'PROVISIONING', 1, 1, now(), now()) ON CONFLICT DO NOTHING",
        key.tenant, key.vcluster);
    tx.exec_params(
        "INSERT INTO vcluster_credentials (tenant, vcluster, serial, common_name, groups, role, issued_by, "
        "issue_time, expire_time) VALUES ($1, $2, $3, 'alice', '{septa:view}', 'view', 'admin', now(), "
        "now() + interval '1 hour')",
        key.tenant, key.vcluster, serial);
    tx.commit();
    return Status::Ok();
  }
  Status RevokeCredential(const core::VirtualClusterKey& key, const std::string& serial) {
    pqxx::connection c(database_->url());
    pqxx::work tx(c);
    auto rows = tx.exec_params(
        "UPDATE vcluster_credentials SET revoke_time = now() WHERE tenant = $1 AND vcluster = $2 AND serial = $3 "
        "RETURNING 1",
        key.tenant, key.vcluster, serial);
    tx.commit();
    return rows.size() == 1 ? Status::Ok() : NotFound("no credential " + serial);
  }
  Status SetTenantSuspended(const std::string& tenant, bool suspended) {
    pqxx::connection c(database_->url());
    pqxx::work tx(c);
    auto rows = tx.exec_params("UPDATE tenants SET state = $2 WHERE name = $1 RETURNING 1", tenant,
                               suspended ? "suspended" : "active");
    tx.commit();
    return rows.size() == 1 ? Status::Ok() : NotFound("no tenant " + tenant);
  }

  // The tenant on the isolated tier, whose row the tier change edits.
  Status SetCredentialTtlMax(const std::string& tenant, std::int64_t seconds) {
    pqxx::connection c(database_->url());
    pqxx::work tx(c);
    tx.exec_params(
        "INSERT INTO tenants (name, trust_tier, state, create_time, update_time, version) "
        "VALUES ($1, 'isolated', 'active', now(), now(), 1) ON CONFLICT DO NOTHING",
        tenant);
    tx.exec_params("UPDATE trust_tiers SET credential_ttl_max_seconds = $1 WHERE name = 'isolated'", seconds);
    tx.commit();
    return Status::Ok();
  }

  std::unique_ptr<test::TestDatabase> database_;
  std::unique_ptr<PgVirtualObjectStore> store_;  // destroyed first: its connections close before the drop
};

}  // namespace septa::store

namespace septa::core::contract {
INSTANTIATE_TYPED_TEST_SUITE_P(pg, VirtualObjectStoreContract, ::testing::Types<store::PgVirtualObjectStoreEnv>);
}  // namespace septa::core::contract

namespace septa::store {

// No tenant, no cap to read: a TokenRequest is then refused (503), never uncapped.
TEST(PgVirtualObjectStore, CredentialTtlMaxOfAnUnknownTenantIsNotFound) {
  PgVirtualObjectStoreEnv env;
  ASSERT_TRUE(env.SetUp().ok());
  EXPECT_EQ(env.store().CredentialTtlMax({"nobody", "dev"}).status().code(), Code::kNotFound);
}

}  // namespace septa::store
