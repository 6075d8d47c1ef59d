// --wait's poll loop on a clock that steps and virtual clusters that change
// as a script says: what ends a wait, which reads it makes, and when; and
// apply --wait on it: what it waits for, what it prints, its exit codes.
#include "services/cli/vcluster_wait.h"

#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <sstream>

#include "services/cli/apply_command.h"

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

v1::ApplyPlan AppliedPlan(const std::vector<std::pair<std::string, v1::ObjectChange::Action>>& vclusters) {
  v1::ApplyPlan plan;
  plan.set_applied(true);
  auto* tenant = plan.add_changes();
  tenant->set_kind("Tenant");
  tenant->set_name("tenants/acme");
  tenant->set_action(v1::ObjectChange::UPDATE);
  for (const auto& [name, action] : vclusters) {
    auto* change = plan.add_changes();
    change->set_kind("VirtualCluster");
    change->set_name("tenants/acme/vclusters/" + name);
    change->set_action(action);
  }
  return plan;
}

TEST(ApplyWaitTargets, VirtualClustersUntilReadyAndDeletedOnesUntilGone) {
  const auto targets = ApplyWaitTargets(AppliedPlan({{"train", v1::ObjectChange::CREATE},
                                                     {"eval", v1::ObjectChange::UPDATE},
                                                     {"steady", v1::ObjectChange::UNCHANGED},
                                                     {"old", v1::ObjectChange::DELETE}}));
  ASSERT_EQ(targets.size(), 4u) << "the tenant needs no wait";
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(targets[i].tenant, "acme");
    EXPECT_EQ(targets[i].goal, WaitGoal::kReady) << targets[i].name;
  }
  EXPECT_EQ(targets[0].name, "train");
  EXPECT_EQ(targets[3].name, "old");
  EXPECT_EQ(targets[3].goal, WaitGoal::kGone);
  EXPECT_TRUE(ApplyWaitTargets(AppliedPlan({})).empty());
}

struct Waited {
  int exit_code;
  std::string err;
};

Waited WaitForPlan(const v1::ApplyPlan& plan, World& world, StepClock& clock,
                   std::chrono::milliseconds timeout = std::chrono::minutes(1)) {
  std::ostringstream err;
  const int code = WaitForApply(ApplyWaitTargets(plan), timeout, clock, world.Reader(), "h:1", err);
  return {code, err.str()};
}

void SetCondition(VirtualCluster& vc, const std::string& type, const std::string& status, const std::string& reason,
                  const std::string& message) {
  auto* c = vc.add_conditions();
  c->set_type(type);
  c->set_status(status);
  c->set_reason(reason);
  c->set_message(message);
}

TEST(WaitForApply, ProgressLinesUntilEveryVirtualClusterIsReadyOrGone) {
  World world;
  world.Set("train", VirtualCluster::PROVISIONING);
  world.Set("eval", VirtualCluster::SLEEPING);
  world.Set("old", VirtualCluster::DELETING);
  StepClock clock;
  clock.on_sleep = [&] {
    if (clock.sleeps_ == 2) world.Set("train", VirtualCluster::READY);
    if (clock.sleeps_ == 4) world.clusters.erase("old");
  };
  const auto plan = AppliedPlan(
      {{"train", v1::ObjectChange::CREATE}, {"eval", v1::ObjectChange::UPDATE}, {"old", v1::ObjectChange::DELETE}});
  const Waited waited = WaitForPlan(plan, world, clock);
  EXPECT_EQ(waited.exit_code, kExitInSync);
  EXPECT_EQ(waited.err,
            "waiting for 2 virtual clusters: tenants/acme/vclusters/train PROVISIONING, tenants/acme/vclusters/old "
            "DELETING\n"
            "waiting for 1 virtual cluster: tenants/acme/vclusters/old DELETING\n"
            "waited for 3 virtual clusters: 1 READY, 1 SLEEPING, 1 gone\n");
}

TEST(WaitForApply, GivingUpNamesEachVirtualClusterNotReadyWithItsState) {
  World world;
  world.Set("train", VirtualCluster::PROVISIONING);
  SetCondition(world.clusters["train"], "CapacityReady", "False", "MigRelayoutPending", "re-laying out h100-0");
  SetCondition(world.clusters["train"], "NamespaceReady", "True", "NamespaceApplied", "");
  world.Set("eval", VirtualCluster::READY);
  world.Set("old", VirtualCluster::DELETING);
  StepClock clock;
  const auto plan = AppliedPlan(
      {{"train", v1::ObjectChange::CREATE}, {"eval", v1::ObjectChange::CREATE}, {"old", v1::ObjectChange::DELETE}});
  const Waited waited = WaitForPlan(plan, world, clock, std::chrono::seconds(1));
  EXPECT_EQ(waited.exit_code, kExitWaitTimedOut);
  EXPECT_EQ(clock.sleeps_, 4);
  EXPECT_EQ(waited.err,
            "waiting for 2 virtual clusters: tenants/acme/vclusters/train PROVISIONING, tenants/acme/vclusters/old "
            "DELETING\n"
            "septactl: DEADLINE_EXCEEDED: gave up waiting after 1s: 2 of 3 virtual clusters not ready\n"
            "  tenants/acme/vclusters/train: PROVISIONING, CapacityReady=False (MigRelayoutPending: re-laying out "
            "h100-0)\n"
            "  tenants/acme/vclusters/old: DELETING\n");
}

TEST(WaitForApply, AFailedVirtualClusterEndsTheWaitAtOnce) {
  World world;
  world.Set("train", VirtualCluster::PROVISIONING);
  world.Set("eval", VirtualCluster::PROVISIONING);
  StepClock clock;
  clock.on_sleep = [&] {
    world.Set("eval", VirtualCluster::FAILED);
    SetCondition(world.clusters["eval"], "CapacityReady", "False", "MigRelayoutFailed", "the reservation was released");
  };
  const Waited waited =
      WaitForPlan(AppliedPlan({{"train", v1::ObjectChange::CREATE}, {"eval", v1::ObjectChange::CREATE}}), world, clock);
  EXPECT_EQ(waited.exit_code, kExitWaitTimedOut);
  EXPECT_EQ(clock.sleeps_, 1) << "not until the timeout";
  const std::string tail =
      "septactl: FAILED_PRECONDITION: 1 of 2 virtual clusters can no longer become READY; stopped waiting\n"
      "  tenants/acme/vclusters/eval: FAILED, CapacityReady=False (MigRelayoutFailed: the reservation was "
      "released)\n";
  ASSERT_GE(waited.err.size(), tail.size()) << waited.err;
  EXPECT_EQ(waited.err.substr(waited.err.size() - tail.size()), tail) << waited.err;

  // One deleted by someone else since the apply can never be READY either.
  world.clusters.erase("eval");
  const Waited gone = WaitForPlan(AppliedPlan({{"eval", v1::ObjectChange::UPDATE}}), world, clock);
  EXPECT_EQ(gone.exit_code, kExitWaitTimedOut);
  EXPECT_NE(gone.err.find("  tenants/acme/vclusters/eval: gone (deleted since the apply)\n"), std::string::npos)
      << gone.err;
}

TEST(WaitForApply, AFailedReadIsExitFourSinceTheApplyCommitted) {
  World world;
  world.failure = grpc::Status(grpc::StatusCode::UNAVAILABLE, "connection refused");
  StepClock clock;
  const Waited waited = WaitForPlan(AppliedPlan({{"train", v1::ObjectChange::CREATE}}), world, clock);
  EXPECT_EQ(waited.exit_code, kExitWaitTimedOut);
  EXPECT_EQ(waited.err, "septactl: UNAVAILABLE: cannot reach septad at h:1: connection refused\n");
}

TEST(WaitForApply, NothingToWaitForSaysNothing) {
  World world;
  StepClock clock;
  const Waited waited = WaitForPlan(AppliedPlan({}), world, clock);
  EXPECT_EQ(waited.exit_code, kExitInSync);
  EXPECT_EQ(waited.err, "");
  EXPECT_TRUE(world.reads.empty());
}

TEST(WaitForApply, TheProgressLineNamesTheFirstFive) {
  World world;
  std::vector<std::pair<std::string, v1::ObjectChange::Action>> created;
  for (int i = 0; i < 7; ++i) {
    world.Set("vc" + std::to_string(i), VirtualCluster::PROVISIONING);
    created.push_back({"vc" + std::to_string(i), v1::ObjectChange::CREATE});
  }
  StepClock clock;
  clock.on_sleep = [&] {
    for (auto& [name, vc] : world.clusters) vc.set_state(VirtualCluster::READY);
  };
  const Waited waited = WaitForPlan(AppliedPlan(created), world, clock);
  EXPECT_EQ(waited.exit_code, kExitInSync);
  EXPECT_NE(waited.err.find("waiting for 7 virtual clusters: tenants/acme/vclusters/vc0 PROVISIONING, "),
            std::string::npos)
      << waited.err;
  EXPECT_NE(waited.err.find("tenants/acme/vclusters/vc4 PROVISIONING, and 2 more\n"), std::string::npos) << waited.err;
  EXPECT_EQ(waited.err.find("vc5"), std::string::npos) << waited.err;
}

}  // namespace
}  // namespace septa::cli
