#include "services/base/process_stats.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <memory>
#include <sstream>
#include <vector>

#include "tests/support/sanitizer_build.h"

namespace septa::base {
namespace {

constexpr std::size_t kBlock = 64u << 20;

// Touches every page so that they become resident: through a volatile
// pointer, which the optimiser may not drop as stores to memory freed unread
// (clang did, at the TSan stage's -O1).
std::unique_ptr<char[]> TouchedBlock() {
  auto block = std::make_unique<char[]>(kBlock);
  volatile char* pages = block.get();
  for (std::size_t i = 0; i < kBlock; i += 4096) pages[i] = static_cast<char>(i | 1);
  return block;
}

TEST(ProcessStats, HeapInUseCountsALiveAllocationAndNotAFreedOne) {
  if (test::kAddressSanitizerBuild || test::kThreadSanitizerBuild) {
    GTEST_SKIP() << "the sanitizers replace malloc, so glibc's mallinfo2 does not see allocations; the main build "
                    "checks it";
  }
  const std::size_t before = HeapInUse();
  auto block = TouchedBlock();
  EXPECT_GE(HeapInUse(), before + kBlock);
  block.reset();
  EXPECT_LT(HeapInUse(), before + kBlock / 2);
}

TEST(ProcessStats, ResidentBytesGrowWithTouchedPages) {
  const std::size_t before = ResidentBytes();
  EXPECT_GT(before, 0u);
  auto block = TouchedBlock();
  EXPECT_GE(ResidentBytes(), before + kBlock / 2);
}

TEST(ProcessStats, CpuSecondsAdvanceWithWork) {
  const double before = CpuSeconds();
  volatile std::uint64_t sink = 0;
  const auto start = std::chrono::steady_clock::now();
  while (CpuSeconds() - before < 0.02) {
    for (int i = 0; i < 100000; ++i) sink = sink + static_cast<std::uint64_t>(i);
    ASSERT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(30)) << "no CPU time was counted";
  }
  EXPECT_GE(CpuSeconds(), before + 0.02);
}

TEST(ProcessStats, LoadAverageIsThreeNumbers) {
  std::istringstream fields(LoadAverage());
  double one = -1, five = -1, fifteen = -1;
  fields >> one >> five >> fifteen;
  ASSERT_FALSE(fields.fail()) << LoadAverage();
  EXPECT_GE(one, 0);
  EXPECT_GE(five, 0);
  EXPECT_GE(fifteen, 0);
}

}  // namespace
}  // namespace septa::base
