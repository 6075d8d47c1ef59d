#include "common/time_point.h"

#include <gtest/gtest.h>

namespace septa {
namespace {

using namespace std::chrono;

TEST(parseRfc3339, ReadsUtcFractionsAndOffsets) {
  const TimePoint first = sys_days{year{2026} / 11 / 1};
  EXPECT_EQ(ParseRfc3339("2026-11-01T00:00:00Z"), first);
  EXPECT_EQ(ParseRfc3339("2026-11-01t00:00:00z"), first);
  EXPECT_EQ(ParseRfc3339("2026-11-01T01:30:00+01:30"), first);
  EXPECT_EQ(ParseRfc3339("2026-10-31T23:00:00-01:00"), first);
  EXPECT_EQ(ParseRfc3339("2026-11-01T00:00:00.25Z"), first + milliseconds(250));
  EXPECT_EQ(ParseRfc3339("2024-02-29T12:00:00Z"), sys_days{year{2024} / 2 / 29} + hours(12));
  EXPECT_EQ(FormatRfc3339(*ParseRfc3339("2026-11-29T13:37:05Z")), "2026-11-29T13:37:05Z");
}

TEST(parseRfc3339, RefusesAnythingElse) {
  for (const char* text :
       {"", "2026-11-01", "2026-11-01T00:00:00", "2026-11-01 00:00:00Z", "2026-02-30T00:00:00Z", "2026-11-01T24:00:00Z",
        "2026-11-01T23:59:60Z", "2026-11-01T00:00:00.Z", "2026-11-01T00:00:00.1234567890Z", "2026-11-01T00:00:00+0100",
        "2026-11-01T00:00:00Zx", "+2026-11-01T00:00:00Z", "2026-1-01T00:00:00Z", "2026-11-01T00:00:00+01:60"}) {
    EXPECT_EQ(ParseRfc3339(text), std::nullopt) << text;
  }
}

// A TimePoint counts nanoseconds in 64 bits: the years 1678 to 2261 (UBSan
// found the conversion of year 0001 overflowing).
TEST(parseRfc3339, RefusesInstantsATimePointCannotHold) {
  for (const char* text :
       {"0001-01-01T00:00:00Z", "1677-01-01T00:00:00Z", "2262-04-12T00:00:00Z", "9999-12-31T23:59:59.999999999Z"}) {
    EXPECT_EQ(ParseRfc3339(text), std::nullopt) << text;
  }
  EXPECT_TRUE(ParseRfc3339("1678-01-01T00:00:00Z").has_value());
  EXPECT_TRUE(ParseRfc3339("2261-12-31T23:59:59.999999999Z").has_value());
}

}  // namespace
}  // namespace septa
