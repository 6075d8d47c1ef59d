// The contract of core::LeaseStore, run against every implementation:
// lease_store_fake_test.cc (core::FakeLeaseStore) and lease_store_pg_test.cc
// (store::PgLeaseStore on the test run's PostgreSQL).
//
// An implementation plugs in with an environment type:
//   struct Env { Status SetUp(); core::LeaseStore& store(); };
// and INSTANTIATE_TYPED_TEST_SUITE_P(<name>, LeaseStoreContract, ::testing::Types<Env>).
#pragma once

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "services/core/lease_store.h"

namespace septa::reconcile::contract {

using namespace std::chrono_literals;

inline const TimePoint kT0 = TimePoint(std::chrono::seconds(1'800'000'000));

template <typename Env>
class LeaseStoreContract : public ::testing::Test {
 protected:
  void SetUp() override {
    const Status ready = env_.SetUp();
    ASSERT_TRUE(ready.ok()) << ready.ToString();
  }
  core::LeaseStore& store() { return env_.store(); }
  bool Acquire(const std::string& name, const std::string& holder, TimePoint now, std::chrono::milliseconds ttl) {
    Result<bool> held = store().TryAcquire(name, holder, now, ttl);
    EXPECT_TRUE(held.ok()) << held.status().ToString();
    return held.ok() && *held;
  }
  bool Renew(const std::string& name, const std::string& holder, TimePoint now, std::chrono::milliseconds ttl) {
    Result<bool> held = store().Renew(name, holder, now, ttl);
    EXPECT_TRUE(held.ok()) << held.status().ToString();
    return held.ok() && *held;
  }
  core::Lease Get(const std::string& name) {
    Result<std::optional<core::Lease>> lease = store().Get(name);
    EXPECT_TRUE(lease.ok()) << lease.status().ToString();
    EXPECT_TRUE(lease.ok() && lease->has_value()) << "no lease " << name;
    return lease.ok() && lease->has_value() ? **lease : core::Lease{};
  }

  Env env_;
};

TYPED_TEST_SUITE_P(LeaseStoreContract);

TYPED_TEST_P(LeaseStoreContract, TheFirstHolderWinsAndOthersWaitForTheExpiry) {
  EXPECT_TRUE(this->Acquire("c/0", "a", kT0, 10s));
  EXPECT_FALSE(this->Acquire("c/0", "b", kT0 + 9999ms, 10s));
  EXPECT_EQ(this->Get("c/0"), (core::Lease{"c/0", "a", kT0 + 10s, 1, 0}));
  EXPECT_TRUE(this->Acquire("c/0", "b", kT0 + 10s, 10s)) << "expired at its expire_time";
  EXPECT_EQ(this->Get("c/0"), (core::Lease{"c/0", "b", kT0 + 20s, 2, 0}));
  EXPECT_FALSE(this->Renew("c/0", "a", kT0 + 10s, 10s)) << "the old holder lost it";
  EXPECT_FALSE(this->Acquire("c/0", "a", kT0 + 11s, 10s));
}

TYPED_TEST_P(LeaseStoreContract, AcquiringWhatOneHoldsExtendsItInTheSameTenure) {
  EXPECT_TRUE(this->Acquire("c/0", "a", kT0, 10s));
  EXPECT_TRUE(this->Acquire("c/0", "a", kT0 + 5s, 10s));
  EXPECT_EQ(this->Get("c/0"), (core::Lease{"c/0", "a", kT0 + 15s, 1, 1}));
  EXPECT_TRUE(this->Acquire("c/0", "a", kT0 + 30s, 10s)) << "expired, nobody took it: a new tenure";
  EXPECT_EQ(this->Get("c/0"), (core::Lease{"c/0", "a", kT0 + 40s, 2, 0}));
}

TYPED_TEST_P(LeaseStoreContract, OnlyTheHolderRenewsAndOnlyBeforeTheExpiry) {
  EXPECT_FALSE(this->Renew("c/0", "a", kT0, 10s)) << "never taken";
  EXPECT_TRUE(this->Acquire("c/0", "a", kT0, 10s));
  EXPECT_TRUE(this->Renew("c/0", "a", kT0 + 5s, 10s));
  EXPECT_TRUE(this->Renew("c/0", "a", kT0 + 10s, 10s));
  EXPECT_EQ(this->Get("c/0"), (core::Lease{"c/0", "a", kT0 + 20s, 1, 2}));
  EXPECT_FALSE(this->Renew("c/0", "b", kT0 + 11s, 10s));
  EXPECT_FALSE(this->Renew("c/0", "a", kT0 + 20s, 10s)) << "expired: the holder must acquire again";
  EXPECT_EQ(this->Get("c/0").expire_time, kT0 + 20s);
}

TYPED_TEST_P(LeaseStoreContract, ReleaseFreesTheLeaseAtOnceButOnlyForItsHolder) {
  EXPECT_TRUE(this->Acquire("c/0", "a", kT0, 10s));
  EXPECT_TRUE(this->store().Release("c/0", "b").ok());
  EXPECT_EQ(this->Get("c/0").holder, "a") << "b does not hold it";
  EXPECT_TRUE(this->store().Release("c/0", "a").ok());
  EXPECT_EQ(this->Get("c/0").holder, "");
  EXPECT_FALSE(this->Renew("c/0", "a", kT0 + 1s, 10s));
  EXPECT_TRUE(this->Acquire("c/0", "b", kT0 + 1s, 10s)) << "free before its expire time";
  EXPECT_EQ(this->Get("c/0"), (core::Lease{"c/0", "b", kT0 + 11s, 2, 0}));
  EXPECT_TRUE(this->store().Release("never-taken", "a").ok());
  Result<std::optional<core::Lease>> none = this->store().Get("never-taken");
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());
}

TYPED_TEST_P(LeaseStoreContract, LeasesAreIndependent) {
  EXPECT_TRUE(this->Acquire("c/0", "a", kT0, 10s));
  EXPECT_TRUE(this->Acquire("c/1", "b", kT0, 10s));
  EXPECT_TRUE(this->Acquire("other/0", "b", kT0, 10s));
  EXPECT_EQ(this->Get("c/0").holder, "a");
  EXPECT_EQ(this->Get("c/1").holder, "b");
}

TYPED_TEST_P(LeaseStoreContract, RacingHoldersNeverBothHoldALease) {
  constexpr int kHolders = 6, kLeases = 10;
  std::atomic<int> winners[kLeases] = {};
  std::atomic<int> failures{0};
  {
    std::vector<std::jthread> holders;
    for (int h = 0; h < kHolders; ++h) {
      holders.emplace_back([&, h] {
        for (int l = 0; l < kLeases; ++l) {
          Result<bool> held = this->store().TryAcquire("race/" + std::to_string(l), "h" + std::to_string(h), kT0, 10s);
          if (!held.ok()) ++failures;
          if (held.ok() && *held) ++winners[l];
        }
      });
    }
  }
  EXPECT_EQ(failures.load(), 0);
  for (int l = 0; l < kLeases; ++l) EXPECT_EQ(winners[l].load(), 1) << "lease race/" << l;
}

TYPED_TEST_P(LeaseStoreContract, BadNamesAndHoldersAreRefusedNamingTheField) {
  Result<bool> no_name = this->store().TryAcquire("", "a", kT0, 10s);
  ASSERT_FALSE(no_name.ok());
  EXPECT_EQ(no_name.status().code(), Code::kInvalidArgument);
  ASSERT_EQ(no_name.status().violations().size(), 1u);
  EXPECT_EQ(no_name.status().violations()[0].field, "name");
  Result<bool> long_holder = this->store().TryAcquire("c/0", std::string(201, 'h'), kT0, 10s);
  ASSERT_FALSE(long_holder.ok());
  EXPECT_EQ(long_holder.status().code(), Code::kInvalidArgument);
  ASSERT_EQ(long_holder.status().violations().size(), 1u);
  EXPECT_EQ(long_holder.status().violations()[0].field, "holder");
  Result<std::optional<core::Lease>> none = this->store().Get("c/0");
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value()) << "nothing half-written";
}

REGISTER_TYPED_TEST_SUITE_P(LeaseStoreContract, TheFirstHolderWinsAndOthersWaitForTheExpiry,
                            AcquiringWhatOneHoldsExtendsItInTheSameTenure, OnlyTheHolderRenewsAndOnlyBeforeTheExpiry,
                            ReleaseFreesTheLeaseAtOnceButOnlyForItsHolder, LeasesAreIndependent,
                            RacingHoldersNeverBothHoldALease, BadNamesAndHoldersAreRefusedNamingTheField);

}  // namespace septa::reconcile::contract
