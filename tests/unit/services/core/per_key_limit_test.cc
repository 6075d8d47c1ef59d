// A few holders per key at a time (services/core/per_key_limit.h): the
// bound of a tenant's validate_only checks and usage reports in flight.
#include "services/core/per_key_limit.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

namespace septa::core {
namespace {

TEST(PerKeyLimit, ASecondHolderOfAKeyIsRefusedUntilTheFirstLetsGo) {
  PerKeyLimit slots;
  {
    auto acme = slots.TryHold("acme");
    ASSERT_TRUE(acme.has_value());
    EXPECT_FALSE(slots.TryHold("acme").has_value());
    EXPECT_TRUE(slots.TryHold("beta").has_value()) << "another tenant's slot is its own";
    auto moved = std::move(*acme);
    acme.reset();  // the moved-from one gives nothing back
    EXPECT_FALSE(slots.TryHold("acme").has_value());
  }
  EXPECT_TRUE(slots.TryHold("acme").has_value());
}

TEST(PerKeyLimit, UpToItsLimitHoldAtOnce) {
  PerKeyLimit slots(2);
  auto first = slots.TryHold("acme");
  auto second = slots.TryHold("acme");
  ASSERT_TRUE(first.has_value());
  ASSERT_TRUE(second.has_value());
  EXPECT_FALSE(slots.TryHold("acme").has_value());
  second.reset();
  EXPECT_TRUE(slots.TryHold("acme").has_value());
}

TEST(PerKeyLimit, OfManyRacingForOneKeyAtMostItsLimitHoldIt) {
  for (const int limit : {1, 3}) {
    PerKeyLimit slots(limit);
    std::atomic<int> holding{0}, most{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 8; ++t) {
      threads.emplace_back([&] {
        for (int i = 0; i < 2000; ++i) {
          if (auto held = slots.TryHold("acme")) {
            const int now = ++holding;
            int seen = most.load();
            while (now > seen && !most.compare_exchange_weak(seen, now)) {
            }
            --holding;
          }
        }
      });
    }
    for (auto& t : threads) t.join();
    EXPECT_LE(most.load(), limit);
    EXPECT_GE(most.load(), 1);
  }
}

}  // namespace
}  // namespace septa::core
