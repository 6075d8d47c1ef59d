#include "tests/support/fake_store.h"
#include "tests/unit/services/store/capacity_contract.h"
#include "tests/unit/services/store/usage_contract.h"

namespace septa::core {

struct FakeStoreEnv {
  Status SetUp() { return Status::Ok(); }
  Store& store() { return store_; }
  FakeStore store_;
};

namespace {

TEST(FakeStoreFailures, InjectedFailuresAreReturnedWithoutRunningTheBody) {
  FakeStore store;
  store.FailNext(Unavailable("database down"), 2);
  bool ran = false;
  const Status first = store.Transact(TxMode::kReadWrite, [&](Tx&) {
    ran = true;
    return Status::Ok();
  });
  EXPECT_EQ(first.code(), Code::kUnavailable);
  EXPECT_EQ(store.Ready().code(), Code::kUnavailable);
  EXPECT_FALSE(ran);
  EXPECT_TRUE(store.Ready().ok());
}

TEST(FakeStoreFailures, SeededTiersCarryTheSeedTime) {
  const TimePoint seeded = contract::At(1'700'000'000);
  FakeStore store(seeded);
  const Status st = store.Transact(TxMode::kReadOnly, [&](Tx& tx) {
    auto tier = tx.TrustTiers().Get("shared");
    SEPTA_RETURN_IF_ERROR(tier);
    EXPECT_EQ(tier->create_time, seeded);
    EXPECT_EQ(tier->update_time, seeded);
    return Status::Ok();
  });
  EXPECT_TRUE(st.ok());
}

}  // namespace

namespace contract {
INSTANTIATE_TYPED_TEST_SUITE_P(fake, StoreContract, ::testing::Types<FakeStoreEnv>);
INSTANTIATE_TYPED_TEST_SUITE_P(fake, CapacityContract, ::testing::Types<FakeStoreEnv>);
INSTANTIATE_TYPED_TEST_SUITE_P(fake, UsageContract, ::testing::Types<FakeStoreEnv>);
}  // namespace contract
}  // namespace septa::core
