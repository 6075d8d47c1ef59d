// --wait's poll loop on a clock that steps and virtual clusters that change
// as a script says: what ends a wait, which reads it makes, and when.
#include "services/cli/vcluster_wait.h"

#include <gtest/gtest.h>

#include <functional>
#include <map>

namespace septa::cli {
namespace {

using v1::VirtualCluster;

// Sleeps end at once at their deadline; `on_sleep` changes the world meanwhile.
class StepClock final : public Clock {
 public:
  TimePoint Now() const override { return now_; }
  bool SleepUntil(TimePoint deadline, std::stop_token) const override {
    now_ = std::max(now_, deadline);
    ++sleeps_;
    if (on_sleep) on_sleep();
    return true;
  }
  std::function<void()> on_sleep;
  mutable int sleeps_ = 0;

 private:
  mutable TimePoint now_{std::chrono::seconds(1'800'000'000)};
};

// Virtual clusters by name, and the reads made of each.
struct World {
  std::map<std::string, VirtualCluster> clusters;
  std::map<std::string, int> reads;
  grpc::Status failure = grpc::Status::OK;  // answered instead, when set

  ReadVirtualCluster Reader() {
    return [this](const std::string& tenant, const std::string& name, VirtualCluster* out) {
      ++reads[name];
      EXPECT_EQ(tenant, "acme");
      if (!failure.ok()) return failure;
      const auto it = clusters.find(name);
      if (it == clusters.end()) return grpc::Status(grpc::StatusCode::NOT_FOUND, name + " not found");
      *out = it->second;
      return grpc::Status::OK;
    };
  }
  void Set(const std::string& name, VirtualCluster::State state) {
    clusters[name].set_name(name);
    clusters[name].set_tenant("acme");
    clusters[name].set_state(state);
  }
};

WaitTarget Target(const std::string& name, WaitGoal goal) { return {.tenant = "acme", .name = name, .goal = goal}; }

VirtualCluster InState(VirtualCluster::State state) {
  VirtualCluster vc;
  vc.set_state(state);
  return vc;
}

TEST(WaitTargetState, EachGoalByTheStateRead) {
  const auto state = [](WaitGoal goal, std::optional<VirtualCluster::State> seen, bool gone = false) {
    WaitTarget target = Target("train", goal);
    if (seen) target.seen = InState(*seen);
    target.gone = gone;
    return StateOf(target);
  };
  using enum TargetState;
  EXPECT_EQ(state(WaitGoal::kReady, std::nullopt), kWaiting) << "not read yet";
  EXPECT_EQ(state(WaitGoal::kReady, VirtualCluster::PROVISIONING), kWaiting);
  EXPECT_EQ(state(WaitGoal::kReady, VirtualCluster::READY), kReached);
  EXPECT_EQ(state(WaitGoal::kReady, VirtualCluster::SLEEPING), kReached) << "asleep by choice: apply does not wake it";
  EXPECT_EQ(state(WaitGoal::kReady, VirtualCluster::FAILED), kFailed);
  EXPECT_EQ(state(WaitGoal::kReady, VirtualCluster::DELETING), kFailed);
  EXPECT_EQ(state(WaitGoal::kReady, std::nullopt, /*gone=*/true), kFailed);
  EXPECT_EQ(state(WaitGoal::kGone, VirtualCluster::DELETING), kWaiting);
  EXPECT_EQ(state(WaitGoal::kGone, std::nullopt, /*gone=*/true), kReached);
  EXPECT_EQ(state(WaitGoal::kSettled, VirtualCluster::PROVISIONING), kWaiting);
  EXPECT_EQ(state(WaitGoal::kSettled, VirtualCluster::FAILED), kReached) << "vcluster create --wait: settled";
  EXPECT_EQ(state(WaitGoal::kDeleting, VirtualCluster::DELETING), kReached);
  EXPECT_EQ(state(WaitGoal::kDeleting, std::nullopt, /*gone=*/true), kReached);
  EXPECT_EQ(state(WaitGoal::kAsleep, VirtualCluster::READY), kReached) << "woken meanwhile";
  EXPECT_EQ(state(WaitGoal::kAsleep, VirtualCluster::SLEEPING), kWaiting) << "no Sleeping condition yet";
}

TEST(WaitFor, ReadsAtOnceThenPollsOnlyWhatStillWaits) {
  World world;
  world.Set("train", VirtualCluster::PROVISIONING);
  world.Set("eval", VirtualCluster::READY);
  world.Set("old", VirtualCluster::DELETING);
  std::vector<WaitTarget> targets{Target("train", WaitGoal::kReady), Target("eval", WaitGoal::kReady),
                                  Target("old", WaitGoal::kGone)};
  StepClock clock;
  clock.on_sleep = [&] {
    if (clock.sleeps_ == 2) world.Set("train", VirtualCluster::READY);
    if (clock.sleeps_ == 3) world.clusters.erase("old");
  };
  int rounds = 0;
  const WaitOutcome outcome = WaitFor(targets, std::chrono::minutes(1), clock, world.Reader(), [&rounds] { ++rounds; });
  EXPECT_EQ(outcome.end, WaitEnd::kReached);
  EXPECT_EQ(clock.sleeps_, 3);
  EXPECT_EQ(rounds, 4) << "after the first reads and after each poll";
  EXPECT_EQ(world.reads["eval"], 1) << "READY at the first read: never read again";
  EXPECT_EQ(world.reads["train"], 3);
  EXPECT_EQ(world.reads["old"], 4);
  EXPECT_TRUE(targets[2].gone);
}

TEST(WaitFor, OneFailedEndsTheWaitAtOnce) {
  World world;
  world.Set("train", VirtualCluster::PROVISIONING);
  world.Set("eval", VirtualCluster::PROVISIONING);
  std::vector<WaitTarget> targets{Target("train", WaitGoal::kReady), Target("eval", WaitGoal::kReady)};
  StepClock clock;
  clock.on_sleep = [&] { world.Set("eval", VirtualCluster::FAILED); };
  const WaitOutcome outcome = WaitFor(targets, std::chrono::minutes(10), clock, world.Reader(), [] {});
  EXPECT_EQ(outcome.end, WaitEnd::kFailed);
  EXPECT_EQ(clock.sleeps_, 1);
  EXPECT_EQ(StateOf(targets[0]), TargetState::kWaiting);
  EXPECT_EQ(StateOf(targets[1]), TargetState::kFailed);
}

TEST(WaitFor, GivesUpAtTheDeadlinePollingEveryInterval) {
  World world;
  world.Set("train", VirtualCluster::PROVISIONING);
  std::vector<WaitTarget> targets{Target("train", WaitGoal::kReady)};
  StepClock clock;
  const WaitOutcome outcome = WaitFor(targets, std::chrono::seconds(1), clock, world.Reader(), [] {});
  EXPECT_EQ(outcome.end, WaitEnd::kTimedOut);
  EXPECT_EQ(clock.sleeps_, 4) << "every 250ms for 1s";
  EXPECT_EQ(world.reads["train"], 5);
}

TEST(WaitFor, StartsFromWhatTheCommandReturned) {
  World world;
  world.Set("train", VirtualCluster::READY);
  std::vector<WaitTarget> targets{Target("train", WaitGoal::kSettled)};
  targets[0].seen = InState(VirtualCluster::PROVISIONING);
  StepClock clock;
  const WaitOutcome outcome = WaitFor(targets, std::chrono::seconds(5), clock, world.Reader(), [] {});
  EXPECT_EQ(outcome.end, WaitEnd::kReached);
  EXPECT_EQ(clock.sleeps_, 1) << "no read before the first interval";
  EXPECT_EQ(world.reads["train"], 1);
}

TEST(WaitFor, AFailedReadEndsTheWaitWithItsStatus) {
  World world;
  std::vector<WaitTarget> targets{Target("train", WaitGoal::kSettled)};
  StepClock clock;
  WaitOutcome outcome = WaitFor(targets, std::chrono::seconds(5), clock, world.Reader(), [] {});
  EXPECT_EQ(outcome.end, WaitEnd::kReadFailed) << "NOT_FOUND does not settle a create";
  EXPECT_EQ(outcome.status.error_code(), grpc::StatusCode::NOT_FOUND);

  world.Set("train", VirtualCluster::PROVISIONING);
  world.failure = grpc::Status(grpc::StatusCode::PERMISSION_DENIED, "no");
  targets = {Target("train", WaitGoal::kReady)};
  outcome = WaitFor(targets, std::chrono::seconds(5), clock, world.Reader(), [] {});
  EXPECT_EQ(outcome.end, WaitEnd::kReadFailed);
  EXPECT_EQ(outcome.status.error_code(), grpc::StatusCode::PERMISSION_DENIED);
}

TEST(FormatWaitTimeout, SecondsOrMilliseconds) {
  EXPECT_EQ(FormatWaitTimeout(std::chrono::seconds(60)), "60s");
  EXPECT_EQ(FormatWaitTimeout(std::chrono::milliseconds(1500)), "1500ms");
}

}  // namespace
}  // namespace septa::cli
