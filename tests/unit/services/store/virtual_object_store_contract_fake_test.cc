#include "tests/support/fake_virtual_object_store.h"
#include "tests/unit/services/store/virtual_object_store_contract.h"

namespace septa::core::contract {

struct FakeVirtualObjectStoreEnv {
  Status SetUp() { return Status::Ok(); }
  VirtualObjectStore& store() { return store_; }
  Status RecordCredential(const VirtualClusterKey& key, const std::string& serial) {
    store_.RecordCredential(key, serial);
    return Status::Ok();
  }
  Status RevokeCredential(const VirtualClusterKey& key, const std::string& serial) {
    store_.RevokeCredential(key, serial);
    return Status::Ok();
  }
  Status SetCredentialTtlMax(const std::string& tenant, std::int64_t seconds) {
    store_.SetCredentialTtlMax(tenant, seconds);
    return Status::Ok();
  }
  Status SetTenantSuspended(const std::string& tenant, bool suspended) {
    store_.SetTenantSuspended(tenant, suspended);
    return Status::Ok();
  }
  test::FakeVirtualObjectStore store_;
};

INSTANTIATE_TYPED_TEST_SUITE_P(fake, VirtualObjectStoreContract, ::testing::Types<FakeVirtualObjectStoreEnv>);

}  // namespace septa::core::contract
