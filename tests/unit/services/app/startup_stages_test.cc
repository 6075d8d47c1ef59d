// StartupStages: stages start in order and stop in reverse, once each, on a
// failed start and at shutdown alike.
#include "services/app/startup_stages.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace septa::app {
namespace {

class StartupStagesTest : public ::testing::Test {
 protected:
  // A stage that logs its start and stop into `events_`, or fails to start.
  std::function<Result<StopFn>()> Stage(const std::string& name, bool fails = false) {
    return [this, name, fails]() -> Result<StopFn> {
      events_.push_back("start " + name);
      if (fails) return InvalidField(name + "_addr", "cannot listen");
      return StopFn([this, name] { events_.push_back("stop " + name); });
    };
  }

  std::vector<std::string> events_;
};

TEST_F(StartupStagesTest, StartsInOrderAndStopsInReverse) {
  StartupStages stages;
  ASSERT_TRUE(stages.Run("a", Stage("a")).ok());
  ASSERT_TRUE(stages.Run("b", Stage("b")).ok());
  ASSERT_TRUE(stages.Run("c", Stage("c")).ok());
  EXPECT_EQ(stages.Running(), (std::vector<std::string>{"a", "b", "c"}));
  stages.StopAll();
  EXPECT_EQ(events_, (std::vector<std::string>{"start a", "start b", "start c", "stop c", "stop b", "stop a"}));
  EXPECT_TRUE(stages.Running().empty());
}

TEST_F(StartupStagesTest, AFailedStageIsNamedAndOnlyTheStagesBeforeItAreStoppedOnce) {
  StartupStages stages;
  ASSERT_TRUE(stages.Run("a", Stage("a")).ok());
  ASSERT_TRUE(stages.Run("b", Stage("b")).ok());
  Status failed = stages.Run("c", Stage("c", /*fails=*/true));
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.code(), Code::kInvalidArgument);
  EXPECT_EQ(failed.message(), "stage c: c_addr: cannot listen");
  ASSERT_EQ(failed.violations().size(), 1u) << "the field violation is kept";
  EXPECT_EQ(failed.violations()[0].field, "c_addr");
  EXPECT_EQ(stages.Running(), (std::vector<std::string>{"a", "b"}));
  stages.StopAll();
  stages.StopAll();  // idempotent
  EXPECT_EQ(events_, (std::vector<std::string>{"start a", "start b", "start c", "stop b", "stop a"}));
}

TEST_F(StartupStagesTest, TheDestructorStopsWhatIsStillRunning) {
  {
    StartupStages stages;
    ASSERT_TRUE(stages.Run("a", Stage("a")).ok());
    ASSERT_TRUE(stages.Run("b", Stage("b")).ok());
  }
  EXPECT_EQ(events_, (std::vector<std::string>{"start a", "start b", "stop b", "stop a"}));
  events_.clear();
  {
    StartupStages stages;
    ASSERT_TRUE(stages.Run("a", Stage("a")).ok());
    stages.StopAll();
  }  // stopped already: not again
  EXPECT_EQ(events_, (std::vector<std::string>{"start a", "stop a"}));
}

TEST_F(StartupStagesTest, AStageWithNothingToStopTakesItsPlace) {
  StartupStages stages;
  ASSERT_TRUE(stages.Run("a", Stage("a")).ok());
  ASSERT_TRUE(stages.Run("nothing", []() -> Result<StopFn> { return StopFn(); }).ok());
  ASSERT_TRUE(stages.Run("c", Stage("c")).ok());
  EXPECT_EQ(stages.Running(), (std::vector<std::string>{"a", "nothing", "c"}));
  stages.StopAll();
  EXPECT_EQ(events_, (std::vector<std::string>{"start a", "start c", "stop c", "stop a"}));
}

// With the stop given up front, a failed start runs it to undo its part,
// then the earlier stages are stopped in reverse as before.
TEST_F(StartupStagesTest, AGivenStopAlsoUndoesAFailedStart) {
  StartupStages stages;
  auto start = [this](const std::string& name, bool fails) {
    return [this, name, fails]() -> Status {
      events_.push_back("start " + name);
      return fails ? Internal("half started") : Status::Ok();
    };
  };
  auto stop = [this](const std::string& name) { return [this, name] { events_.push_back("stop " + name); }; };
  ASSERT_TRUE(stages.Run("a", start("a", false), stop("a")).ok());
  Status failed = stages.Run("b", start("b", true), stop("b"));
  EXPECT_EQ(failed.ToString(), "INTERNAL: stage b: half started");
  EXPECT_EQ(stages.Running(), (std::vector<std::string>{"a"}));
  stages.StopAll();
  stages.StopAll();
  EXPECT_EQ(events_, (std::vector<std::string>{"start a", "start b", "stop b", "stop a"}));
  ASSERT_TRUE(stages.Run("none", start("none", false), StopFn()).ok());
  stages.StopAll();
  EXPECT_EQ(events_.back(), "start none");
}

}  // namespace
}  // namespace septa::app
