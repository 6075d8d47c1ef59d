// The retention of one-minute usage rows (core::SweepUsageMinutes) on the
// FakeStore: minutes before the cutoff go in bounded batches, the hours and
// days they were added to stay, so a report by the hour never changes.
#include "services/core/retention.h"

#include <gtest/gtest.h>

#include "tests/unit/services/core/usage_fixture.h"

namespace septa::core {
namespace {

using std::chrono::hours;
using std::chrono::minutes;

class UsageRetentionTest : public UsageTest {
 protected:
  std::vector<UsageBucket> Buckets(UsageResolution resolution, TimePoint start, TimePoint end) {
    std::vector<UsageBucket> buckets;
    const UsageQuery query{.tenant = "",
                           .start = start,
                           .end = end,
                           .resolution = resolution,
                           .step = resolution == UsageResolution::kMinute ? minutes(1) : hours(1),
                           .group_by = {UsageDimension::kVcluster}};
    EXPECT_TRUE(store
                    .Transact(TxMode::kReadOnly,
                              [&](Tx& tx) -> Status {
                                SEPTA_ASSIGN_OR_RETURN(buckets, tx.Usage().Query(query));
                                return Status::Ok();
                              })
                    .ok());
    return buckets;
  }
  static double Allocated(const std::vector<UsageBucket>& buckets) {
    double sum = 0;
    for (const UsageBucket& b : buckets) sum += b.allocated_gpu_seconds;
    return sum;
  }
};

TEST_F(UsageRetentionTest, MinutesBeforeTheCutoffGoInBoundedBatchesAndTheHoursStay) {
  const TimePoint hour = TimePoint(std::chrono::floor<hours>(start_.time_since_epoch()));
  Run(minutes(10), 0.5);
  const double hourly = Allocated(Buckets(UsageResolution::kHour, hour, hour + hours(2)));
  const std::vector<UsageBucket> all = Buckets(UsageResolution::kMinute, start_, start_ + minutes(10));
  ASSERT_FALSE(all.empty());
  const TimePoint cutoff = start_ + minutes(5);
  std::size_t old_minutes = 0;
  for (const UsageBucket& b : all) old_minutes += b.start < cutoff ? 1 : 0;
  ASSERT_GT(old_minutes, 2u);

  auto bounded = SweepUsageMinutes(store, cutoff, {.batch = 2, .max_batches = 1});
  ASSERT_TRUE(bounded.ok()) << bounded.status().ToString();
  EXPECT_EQ(*bounded, 2) << "one batch of two rows";

  auto rest = SweepUsageMinutes(store, cutoff, {.batch = 3, .max_batches = 100});
  ASSERT_TRUE(rest.ok()) << rest.status().ToString();
  EXPECT_GT(*rest, 0);
  const std::vector<UsageBucket> kept = Buckets(UsageResolution::kMinute, start_, start_ + minutes(10));
  for (const UsageBucket& b : kept) EXPECT_GE(b.start, cutoff) << FormatRfc3339(b.start);
  EXPECT_EQ(kept.size(), all.size() - old_minutes);
  EXPECT_DOUBLE_EQ(Allocated(Buckets(UsageResolution::kHour, hour, hour + hours(2))), hourly);

  auto again = SweepUsageMinutes(store, cutoff);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, 0) << "nothing left to delete: a second replica's sweep changes nothing";
}

}  // namespace
}  // namespace septa::core
