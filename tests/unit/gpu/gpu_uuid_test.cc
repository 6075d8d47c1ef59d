#include "gpu/gpu_uuid.h"

#include <gtest/gtest.h>

#include <regex>
#include <set>

namespace septa::gpu {
namespace {

TEST(SyntheticGpuUuid, HasNvidiasShapeAndIsStableAndDistinct) {
  const std::regex shape("GPU-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}");
  std::set<std::string> seen;
  for (const char* node : {"h100-0", "h100-1", "h100-10", "a100-0"}) {
    for (int index = 0; index < 16; ++index) {
      const std::string uuid = SyntheticGpuUuid(node, index);
      EXPECT_TRUE(std::regex_match(uuid, shape)) << uuid;
      EXPECT_EQ(uuid, SyntheticGpuUuid(node, index));
      seen.insert(uuid);
    }
  }
  EXPECT_EQ(seen.size(), 64u);
  EXPECT_NE(SyntheticGpuUuid("h100-1", 10), SyntheticGpuUuid("h100-11", 0)) << "the index is not run into the name";
}

}  // namespace
}  // namespace septa::gpu
