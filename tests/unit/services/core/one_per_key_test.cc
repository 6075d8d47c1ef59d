// One holder per key at a time (services/core/one_per_key.h): the bound of a
// tenant's validate_only checks in flight.
#include "services/core/one_per_key.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

namespace septa::core {
namespace {

TEST(OnePerKey, ASecondHolderOfAKeyIsRefusedUntilTheFirstLetsGo) {
  OnePerKey slots;
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

TEST(OnePerKey, OfManyRacingForOneKeyAtMostOneHoldsIt) {
  OnePerKey slots;
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
  EXPECT_EQ(most.load(), 1);
}

}  // namespace
}  // namespace septa::core
