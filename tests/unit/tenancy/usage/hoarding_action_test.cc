#include "tenancy/usage/hoarding_action.h"

#include <gtest/gtest.h>

#include "tests/unit/tenancy/usage/usage_samples.h"

namespace septa::tenancy::usage {
namespace {

using namespace septa::tenancy::usage::testing;  // NOLINT: the tests' vocabulary
using std::chrono::minutes;

VirtualCluster Ready() {
  VirtualCluster vc;
  vc.tenant = "acme";
  vc.name = "train";
  vc.state = VirtualClusterState::kReady;
  vc.generation = 3;
  return vc;
}

Hoarder IdleHoarder(bool holding_memory = false) {
  return {.holder = {.tenant = "acme", .vcluster = "train", .tier = gpu::Tier::kShared},
          .idle = minutes(20),
          .holding_memory = holding_memory};
}

HoardingPolicy OptedIn() { return {.threshold = minutes(15), .sleep_after = minutes(60), .tier_name = "shared"}; }
HoardingPolicy NotOptedIn() {
  return {.threshold = minutes(15), .sleep_after = std::nullopt, .tier_name = "exclusive"};
}

// What the controller would store: the decision applied at `now`.
VirtualCluster Applied(VirtualCluster vc, const HoardingAction& action, TimePoint now) {
  if (action.condition) SetCondition(vc.conditions, *action.condition, now);
  if (action.sleep) vc.state = VirtualClusterState::kSleeping;
  return vc;
}

TEST(DecideHoardingTest, AVirtualClusterNeverFlaggedAndNotAHoarderGetsNoCondition) {
  EXPECT_FALSE(DecideHoarding(Ready(), std::nullopt, OptedIn(), At(0)).condition);
  VirtualCluster sleeping = Ready();
  sleeping.state = VirtualClusterState::kSleeping;
  EXPECT_FALSE(DecideHoarding(sleeping, IdleHoarder(), OptedIn(), At(0)).condition);
}

TEST(DecideHoardingTest, AHoarderIsFlaggedWithItsThresholdAndWhenItWillSleep) {
  const HoardingAction action = DecideHoarding(Ready(), IdleHoarder(), OptedIn(), At(0));
  ASSERT_TRUE(action.condition);
  EXPECT_FALSE(action.sleep);
  EXPECT_EQ(action.condition->type, "Hoarding");
  EXPECT_EQ(action.condition->status, ConditionStatus::kTrue);
  EXPECT_EQ(action.condition->reason, "Idle");
  EXPECT_EQ(action.condition->observed_generation, 3);
  EXPECT_NE(action.condition->message.find("at least 15m (the threshold of trust tier shared)"), std::string::npos)
      << action.condition->message;
  EXPECT_NE(action.condition->message.find("put to sleep at " + FormatRfc3339(At(3600)) + " unless it is used"),
            std::string::npos)
      << action.condition->message;
}

TEST(DecideHoardingTest, KeepingMemoryLoadedIsItsOwnReason) {
  const HoardingAction action = DecideHoarding(Ready(), IdleHoarder(/*holding_memory=*/true), OptedIn(), At(0));
  ASSERT_TRUE(action.condition);
  EXPECT_EQ(action.condition->reason, "IdleHoldingMemory");
  EXPECT_NE(action.condition->message.find("with memory still allocated"), std::string::npos);
}

TEST(DecideHoardingTest, ATierThatDoesNotOptInIsFlaggedButNeverSlept) {
  VirtualCluster vc = Applied(Ready(), DecideHoarding(Ready(), IdleHoarder(), NotOptedIn(), At(0)), At(0));
  const HoardingAction much_later = DecideHoarding(vc, IdleHoarder(), NotOptedIn(), At(30 * 24 * 3600));
  EXPECT_FALSE(much_later.sleep);
  ASSERT_TRUE(much_later.condition);
  EXPECT_EQ(much_later.condition->status, ConditionStatus::kTrue);
  EXPECT_NE(much_later.condition->message.find("trust tier exclusive does not put idle virtual clusters to sleep"),
            std::string::npos);
}

TEST(DecideHoardingTest, TheConditionIsStableWhileFlaggedSoNothingIsRewritten) {
  VirtualCluster vc = Applied(Ready(), DecideHoarding(Ready(), IdleHoarder(), OptedIn(), At(0)), At(0));
  for (double t : {30.0, 600.0, 3599.0}) {
    const HoardingAction again = DecideHoarding(vc, IdleHoarder(), OptedIn(), At(t));
    ASSERT_TRUE(again.condition);
    EXPECT_FALSE(again.sleep);
    EXPECT_FALSE(SetCondition(vc.conditions, *again.condition, At(t))) << "rewritten at " << t;
  }
}

TEST(DecideHoardingTest, AfterTheGracePeriodSinceFlaggedItIsPutToSleepAndToldWhyAndHowToWake) {
  VirtualCluster vc = Applied(Ready(), DecideHoarding(Ready(), IdleHoarder(), OptedIn(), At(100)), At(100));
  EXPECT_FALSE(DecideHoarding(vc, IdleHoarder(), OptedIn(), At(100 + 3599)).sleep);
  const HoardingAction due = DecideHoarding(vc, IdleHoarder(), OptedIn(), At(100 + 3600));
  EXPECT_TRUE(due.sleep);
  ASSERT_TRUE(due.condition);
  EXPECT_EQ(due.condition->status, ConditionStatus::kFalse);
  EXPECT_EQ(due.condition->reason, "PutToSleep");
  EXPECT_NE(due.condition->message.find("for 1h more after it was flagged"), std::string::npos)
      << due.condition->message;
  EXPECT_NE(due.condition->message.find("septactl vcluster wake train --tenant acme"), std::string::npos);
  EXPECT_NE(due.condition->message.find("POST /v1/tenants/acme/vclusters/train:wake"), std::string::npos);
}

TEST(DecideHoardingTest, UsedAgainBeforeTheGracePeriodEndsItIsUnflaggedAndTheGraceStartsOver) {
  VirtualCluster vc = Applied(Ready(), DecideHoarding(Ready(), IdleHoarder(), OptedIn(), At(0)), At(0));
  const HoardingAction used = DecideHoarding(vc, std::nullopt, OptedIn(), At(1800));
  ASSERT_TRUE(used.condition);
  EXPECT_FALSE(used.sleep);
  EXPECT_EQ(used.condition->status, ConditionStatus::kFalse);
  EXPECT_EQ(used.condition->reason, "InUse");
  vc = Applied(vc, used, At(1800));
  // Idle again: flagged anew, and the hour counts from now.
  const HoardingAction again = DecideHoarding(vc, IdleHoarder(), OptedIn(), At(2700));
  vc = Applied(vc, again, At(2700));
  EXPECT_FALSE(DecideHoarding(vc, IdleHoarder(), OptedIn(), At(2700 + 3599)).sleep);
  EXPECT_TRUE(DecideHoarding(vc, IdleHoarder(), OptedIn(), At(2700 + 3600)).sleep);
}

TEST(DecideHoardingTest, FlaggedThenSleptOrDeletedByItsTenantIsUnflaggedSoAWakeStartsTheGraceOver) {
  VirtualCluster vc = Applied(Ready(), DecideHoarding(Ready(), IdleHoarder(), OptedIn(), At(0)), At(0));
  vc.state = VirtualClusterState::kSleeping;
  const HoardingAction asleep = DecideHoarding(vc, IdleHoarder(), OptedIn(), At(60));
  ASSERT_TRUE(asleep.condition);
  EXPECT_FALSE(asleep.sleep);
  EXPECT_EQ(asleep.condition->status, ConditionStatus::kFalse);
  EXPECT_EQ(asleep.condition->reason, "NotReady");
  EXPECT_NE(asleep.condition->message.find("SLEEPING"), std::string::npos);
  vc = Applied(vc, asleep, At(60));
  vc.state = VirtualClusterState::kReady;  // woken, still idle
  vc = Applied(vc, DecideHoarding(vc, IdleHoarder(), OptedIn(), At(5000)), At(5000));
  EXPECT_FALSE(DecideHoarding(vc, IdleHoarder(), OptedIn(), At(5000 + 3599)).sleep);
  EXPECT_TRUE(DecideHoarding(vc, IdleHoarder(), OptedIn(), At(5000 + 3600)).sleep);
}

TEST(DecideHoardingTest, AVirtualClusterPutToSleepIsLeftAloneWhileItSleeps) {
  VirtualCluster vc = Applied(Ready(), DecideHoarding(Ready(), IdleHoarder(), OptedIn(), At(0)), At(0));
  vc = Applied(vc, DecideHoarding(vc, IdleHoarder(), OptedIn(), At(3600)), At(3600));
  ASSERT_EQ(vc.state, VirtualClusterState::kSleeping);
  EXPECT_FALSE(DecideHoarding(vc, IdleHoarder(), OptedIn(), At(7200)).condition);
}

}  // namespace
}  // namespace septa::tenancy::usage
