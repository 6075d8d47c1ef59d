#include "tenancy/host/quantity.h"

#include <gtest/gtest.h>

namespace septa::tenancy::host {
namespace {

TEST(HostQuantity, CanonicalFormsAsTheApiServerWritesThem) {
  EXPECT_EQ(CpuQuantity(4000), "4");
  EXPECT_EQ(CpuQuantity(1500), "1500m");
  EXPECT_EQ(CpuQuantity(50), "50m");
  EXPECT_EQ(MemoryQuantity(128), "128Mi");
  EXPECT_EQ(MemoryQuantity(1536), "1536Mi");
  EXPECT_EQ(MemoryQuantity(2048), "2Gi");
  EXPECT_EQ(MemoryQuantity(262144), "256Gi");
  EXPECT_EQ(MemoryQuantity(1LL << 30), "1Pi");
}

TEST(HostQuantity, ZeroAndThousandsOfCoresAreCanonicalToo) {
  EXPECT_EQ(CpuQuantity(0), "0");
  EXPECT_EQ(CpuQuantity(2'000'000), "2k");  // the API server prints 2000 cores so
  EXPECT_EQ(CpuQuantity(1'000'000'000), "1M");
  EXPECT_EQ(MemoryQuantity(0), "0");
}

TEST(HostQuantity, KaiMemoryIsInMegabytesRoundedDown) {
  EXPECT_EQ(MibToMegabytes(1024), 1073);    // 1,073,741,824 bytes
  EXPECT_EQ(MibToMegabytes(32768), 34359);  // 34,359,738,368 bytes
  EXPECT_EQ(MibToMegabytes(1LL << 30), 1125899906);
}

}  // namespace
}  // namespace septa::tenancy::host
