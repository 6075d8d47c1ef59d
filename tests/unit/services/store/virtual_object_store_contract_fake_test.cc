#include "tests/support/fake_virtual_object_store.h"
#include "tests/unit/services/store/virtual_object_store_contract.h"

namespace septa::core::contract {

struct FakeVirtualObjectStoreEnv {
  Status SetUp() { return Status::Ok(); }
  VirtualObjectStore& store() { return store_; }
  test::FakeVirtualObjectStore store_;
};

INSTANTIATE_TYPED_TEST_SUITE_P(fake, VirtualObjectStoreContract, ::testing::Types<FakeVirtualObjectStoreEnv>);

}  // namespace septa::core::contract
