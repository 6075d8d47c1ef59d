// RestartBackoff: growing, capped pauses between failed restarts, and
// "gave up" once the server has been down for give_up_after (FakeClock time).
#include "services/store/restart_backoff.h"

#include <gtest/gtest.h>

#include "tests/support/fake_clock.h"

namespace septa::store {
namespace {

using std::chrono::milliseconds;

TEST(RestartBackoff, DelaysDoubleUpToTheCap) {
  RestartBackoff backoff({.first_delay = milliseconds(100), .max_delay = milliseconds(1000)});
  FakeClock clock;
  backoff.ServerExited(clock.Now());
  EXPECT_EQ(backoff.AttemptFailed(), milliseconds(100));
  EXPECT_EQ(backoff.AttemptFailed(), milliseconds(200));
  EXPECT_EQ(backoff.AttemptFailed(), milliseconds(400));
  EXPECT_EQ(backoff.AttemptFailed(), milliseconds(800));
  EXPECT_EQ(backoff.AttemptFailed(), milliseconds(1000));
  EXPECT_EQ(backoff.AttemptFailed(), milliseconds(1000));
}

TEST(RestartBackoff, ASuccessfulStartResetsTheDelayAndTheDowntime) {
  RestartBackoff backoff({.first_delay = milliseconds(100), .max_delay = milliseconds(1000)});
  FakeClock clock;
  backoff.ServerExited(clock.Now());
  backoff.AttemptFailed();
  backoff.AttemptFailed();
  backoff.ServerRunning();
  EXPECT_FALSE(backoff.Down());
  backoff.ServerExited(clock.Now());
  EXPECT_TRUE(backoff.Down());
  EXPECT_EQ(backoff.AttemptFailed(), milliseconds(100));
}

TEST(RestartBackoff, GivesUpOnlyAfterBeingDownThatLong) {
  RestartBackoff backoff({.give_up_after = milliseconds(60'000)});
  FakeClock clock;
  EXPECT_FALSE(backoff.GaveUp(clock.Now()));  // never down
  backoff.ServerExited(clock.Now());
  clock.Advance(milliseconds(30'000));
  backoff.ServerExited(clock.Now());  // still the same outage: it counts from the first
  backoff.AttemptFailed();
  clock.Advance(milliseconds(29'999));
  EXPECT_FALSE(backoff.GaveUp(clock.Now()));
  clock.Advance(milliseconds(1));
  EXPECT_TRUE(backoff.GaveUp(clock.Now()));
  backoff.ServerRunning();
  EXPECT_FALSE(backoff.GaveUp(clock.Now()));
}

}  // namespace
}  // namespace septa::store
