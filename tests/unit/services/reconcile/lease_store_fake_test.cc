#include "tests/support/fake_lease_store.h"
#include "tests/unit/services/reconcile/lease_store_contract.h"

namespace septa::reconcile::contract {

struct FakeLeaseStoreEnv {
  Status SetUp() { return Status::Ok(); }
  core::LeaseStore& store() { return store_; }
  core::FakeLeaseStore store_;
};

INSTANTIATE_TYPED_TEST_SUITE_P(fake, LeaseStoreContract, ::testing::Types<FakeLeaseStoreEnv>);

}  // namespace septa::reconcile::contract
