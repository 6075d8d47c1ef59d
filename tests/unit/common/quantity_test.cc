#include "common/quantity.h"

#include <gtest/gtest.h>

namespace septa {
namespace {

TEST(commonQuantity, CanonicalTextAsTheApiServerPrintsIt) {
  EXPECT_EQ(FormatQuantityMilli(0, false), "0");
  EXPECT_EQ(FormatQuantityMilli(250, false), "250m");
  EXPECT_EQ(FormatQuantityMilli(1500, false), "1500m");
  EXPECT_EQ(FormatQuantityMilli(2000, false), "2");
  EXPECT_EQ(FormatQuantityMilli(1'000'000, false), "1k");
  EXPECT_EQ(FormatQuantityMilli(1'000'000'000'000LL, false), "1G");
  EXPECT_EQ(FormatQuantityMilli(1'073'741'824'000LL, true), "1Gi");
  EXPECT_EQ(FormatQuantityMilli(1536LL * 1024 * 1024 * 1000, true), "1536Mi");
  EXPECT_EQ(FormatQuantityMilli(512'000, true), "512");   // below 1024: no binary suffix
  EXPECT_EQ(FormatQuantityMilli(1'000'000, true), "1k");  // ... but decimal ones
}

}  // namespace
}  // namespace septa
