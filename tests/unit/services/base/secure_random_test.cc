#include "services/base/secure_random.h"

#include <gtest/gtest.h>

#include <array>

namespace septa::base {
namespace {

TEST(SecureRandom, FillsAndReportsOk) {
  SecureRandom random;
  std::array<std::uint8_t, 32> a{}, b{};
  ASSERT_TRUE(random.Fill(a).ok());
  ASSERT_TRUE(random.Fill(b).ok());
  EXPECT_NE(a, b);  // 2^-256 to fail by chance
  EXPECT_TRUE(random.Fill({}).ok());
}

}  // namespace
}  // namespace septa::base
