#include "common/percentile.h"

#include <gtest/gtest.h>

#include <vector>

namespace septa {
namespace {

TEST(Percentile, IsTheNearestRankOfTheSortedSample) {
  const std::vector<double> sample = {4, 1, 3, 2};
  EXPECT_EQ(Percentile(sample, 0.0), 1);
  EXPECT_EQ(Percentile(sample, 0.5), 3);  // index floor(0.5 * 4) = 2 of {1,2,3,4}
  EXPECT_EQ(Percentile(sample, 0.99), 4);
  EXPECT_EQ(Percentile(sample, 1.0), 4);  // clamped to the maximum
}

TEST(Percentile, OfAHundredValuesP99IsTheLargestButOne) {
  std::vector<int> sample;
  for (int i = 100; i >= 1; --i) sample.push_back(i);
  EXPECT_EQ(Percentile(sample, 0.99), 100);  // index 99
  EXPECT_EQ(Percentile(sample, 0.98), 99);
  EXPECT_EQ(Percentile(sample, 0.5), 51);
}

TEST(Percentile, OfAnEmptySampleIsZero) {
  EXPECT_EQ(Percentile(std::vector<float>{}, 0.5), 0.0F);
  EXPECT_EQ(Percentile(std::vector<double>{7}, -1.0), 7);
}

}  // namespace
}  // namespace septa
