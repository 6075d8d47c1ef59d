#include "tenancy/condition.h"

#include <gtest/gtest.h>

namespace septa::tenancy {
namespace {

using std::chrono::seconds;

const TimePoint kT0 = TimePoint(seconds(1'800'000'000));

Condition CapacityReady(ConditionStatus status, std::string reason, std::int64_t generation = 1) {
  return {"CapacityReady", status, std::move(reason), "", {}, generation};
}

TEST(SetCondition, ANewTypeIsAppendedWithNowAsItsTransitionTime) {
  std::vector<Condition> conditions;
  EXPECT_TRUE(SetCondition(conditions, CapacityReady(ConditionStatus::kFalse, "Pending"), kT0));
  ASSERT_EQ(conditions.size(), 1u);
  EXPECT_EQ(conditions[0].last_transition_time, kT0);
  EXPECT_TRUE(SetCondition(conditions, {"Ready", ConditionStatus::kUnknown, "", "", {}, 1}, kT0 + seconds(1)));
  ASSERT_EQ(conditions.size(), 2u);
  EXPECT_EQ(conditions[1].type, "Ready");
}

TEST(SetCondition, TheTransitionTimeMovesOnlyWhenTheStatusChanges) {
  std::vector<Condition> conditions;
  ASSERT_TRUE(SetCondition(conditions, CapacityReady(ConditionStatus::kFalse, "Pending"), kT0));
  // Same status, new reason: changed, but the status has held since kT0.
  EXPECT_TRUE(SetCondition(conditions, CapacityReady(ConditionStatus::kFalse, "MigRelayoutPending"), kT0 + seconds(5)));
  EXPECT_EQ(conditions[0].last_transition_time, kT0);
  EXPECT_EQ(conditions[0].reason, "MigRelayoutPending");
  EXPECT_TRUE(SetCondition(conditions, CapacityReady(ConditionStatus::kTrue, "Reserved"), kT0 + seconds(9)));
  EXPECT_EQ(conditions[0].last_transition_time, kT0 + seconds(9));
}

TEST(SetCondition, SettingWhatIsAlreadyThereChangesNothing) {
  std::vector<Condition> conditions;
  ASSERT_TRUE(SetCondition(conditions, CapacityReady(ConditionStatus::kTrue, "Reserved"), kT0));
  EXPECT_FALSE(SetCondition(conditions, CapacityReady(ConditionStatus::kTrue, "Reserved"), kT0 + seconds(3)));
  EXPECT_EQ(conditions[0].last_transition_time, kT0);
  // A newer generation observed is a change to write back.
  EXPECT_TRUE(SetCondition(conditions, CapacityReady(ConditionStatus::kTrue, "Reserved", 2), kT0 + seconds(4)));
  EXPECT_EQ(conditions[0].observed_generation, 2);
  EXPECT_EQ(conditions[0].last_transition_time, kT0);
}

TEST(FindCondition, FindsByType) {
  std::vector<Condition> conditions;
  ASSERT_TRUE(SetCondition(conditions, CapacityReady(ConditionStatus::kTrue, "Reserved"), kT0));
  ASSERT_NE(FindCondition(conditions, "CapacityReady"), nullptr);
  EXPECT_EQ(FindCondition(conditions, "CapacityReady")->reason, "Reserved");
  EXPECT_EQ(FindCondition(conditions, "Ready"), nullptr);
  EXPECT_EQ(ConditionStatusName(ConditionStatus::kUnknown), "Unknown");
}

}  // namespace
}  // namespace septa::tenancy
