#include "tenancy/lifecycle.h"

#include <gtest/gtest.h>

#include <string>

namespace septa::tenancy {
namespace {

using State = VirtualClusterState;

constexpr State kStates[] = {State::kProvisioning, State::kReady, State::kSleeping, State::kDeleting, State::kFailed};

TEST(CanTransition, FollowsTheDocumentedTable) {
  // Rows: from; columns: to, in the order of kStates.
  const bool legal[5][5] = {
      // PROV   READY  SLEEP  DEL    FAIL
      {true, true, false, true, true},     // PROVISIONING
      {true, true, true, true, true},      // READY
      {true, true, true, true, true},      // SLEEPING
      {false, false, false, true, false},  // DELETING
      {true, true, false, true, true},     // FAILED
  };
  for (int from = 0; from < 5; ++from) {
    for (int to = 0; to < 5; ++to) {
      EXPECT_EQ(CanTransition(kStates[from], kStates[to]), legal[from][to])
          << VirtualClusterStateName(kStates[from]) << " -> " << VirtualClusterStateName(kStates[to]);
      EXPECT_EQ(CheckTransition(kStates[from], kStates[to]).ok(), legal[from][to]);
    }
  }
  Status st = CheckTransition(State::kDeleting, State::kReady);
  EXPECT_EQ(st.code(), Code::kFailedPrecondition);
  EXPECT_EQ(st.violations()[0].field, "state");
  EXPECT_EQ(st.message(), "state: a DELETING virtual cluster cannot become READY");
}

TEST(CheckUpdatable, OnlyADeletingClusterIsFrozen) {
  for (State state : kStates) {
    EXPECT_EQ(CheckUpdatable(state).ok(), state != State::kDeleting) << VirtualClusterStateName(state);
  }
  EXPECT_EQ(CheckUpdatable(State::kDeleting).code(), Code::kFailedPrecondition);
}

VirtualCluster Current() {
  VirtualCluster vc;
  vc.tenant = "acme";
  vc.name = "train";
  vc.display_name = "Training";
  vc.capacity.tier = gpu::Tier::kIsolated;
  vc.capacity.mig = {{"3g.40gb", 2, ""}};
  vc.quota = {8000, 32768, 50};
  vc.queue = {100, 1};
  vc.state = State::kReady;
  vc.host_namespace = "acme-train";
  vc.generation = 3;
  vc.version = 7;
  return vc;
}

// A patch that differs from Current() in every field.
VirtualCluster Patch() {
  VirtualCluster vc;
  vc.tenant = "other";
  vc.name = "renamed";
  vc.display_name = "Training v2";
  vc.capacity.tier = gpu::Tier::kIsolated;
  vc.capacity.mig = {{"3g.40gb", 4, ""}};
  vc.quota = {16000, 65536, 100};
  vc.queue = {200, 2};
  vc.state = State::kFailed;
  vc.host_namespace = "elsewhere";
  vc.endpoint = "https://evil";
  vc.generation = 99;
  vc.version = 99;
  return vc;
}

TEST(ApplyVirtualClusterPatch, TakesOnlyTheNamedFields) {
  auto updated = ApplyVirtualClusterPatch(Current(), Patch(), {"display_name"});
  ASSERT_TRUE(updated.ok()) << updated.status().ToString();
  EXPECT_EQ(updated->display_name, "Training v2");
  EXPECT_EQ(updated->capacity, Current().capacity);
  EXPECT_EQ(updated->quota, Current().quota);
  EXPECT_EQ(updated->name, "train");
  EXPECT_EQ(updated->tenant, "acme");
  EXPECT_EQ(updated->host_namespace, "acme-train");
  EXPECT_EQ(updated->version, 7);  // the caller's to bump
  EXPECT_EQ(updated->generation, 3) << "a display name is not desired state that reconcilers act on";

  auto resized = ApplyVirtualClusterPatch(Current(), Patch(), {"capacity"});
  ASSERT_TRUE(resized.ok());
  EXPECT_EQ(resized->capacity.mig[0].count, 4);
  EXPECT_EQ(resized->display_name, "Training");
  EXPECT_EQ(resized->generation, 4);

  auto members = ApplyVirtualClusterPatch(Current(), Patch(), {"quota.pods", "queue.priority"});
  ASSERT_TRUE(members.ok());
  EXPECT_EQ(members->quota, (WorkloadQuota{8000, 32768, 100}));
  EXPECT_EQ(members->queue, (QueueSettings{200, 1}));
  EXPECT_EQ(members->generation, 4);

  auto all = ApplyVirtualClusterPatch(Current(), Patch(), {"display_name", "capacity", "quota", "queue"});
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->quota, Patch().quota);
  EXPECT_EQ(all->queue, Patch().queue);
  EXPECT_EQ(all->generation, 4) << "one patch, one generation";
  EXPECT_EQ(all->state, State::kReady);
}

TEST(ApplyVirtualClusterPatch, ApiLimitsAreReplacedWholeOrOneMemberAtATime) {
  VirtualCluster current = Current();
  current.api_limits = {100, 1000, 5, 8};
  VirtualCluster patch = Patch();
  patch.api_limits = {{}, {}, 50, {}};
  auto one = ApplyVirtualClusterPatch(current, patch, {"api_limits.watches"});
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(one->api_limits, (ApiLimits{100, 1000, 50, 8}));
  EXPECT_EQ(one->generation, 4) << "the limits are desired state";
  auto cleared = ApplyVirtualClusterPatch(current, patch, {"api_limits.objects"});
  ASSERT_TRUE(cleared.ok());
  EXPECT_EQ(cleared->api_limits, (ApiLimits{{}, 1000, 5, 8})) << "absent: the tier's default";
  auto whole = ApplyVirtualClusterPatch(current, patch, {"api_limits"});
  ASSERT_TRUE(whole.ok());
  EXPECT_EQ(whole->api_limits, patch.api_limits);
  for (const std::string path :
       {"api_limits.object_bytes", "api_limits.requests_in_flight", "api_limits.objects", "api_limits"}) {
    EXPECT_TRUE(ApplyVirtualClusterPatch(current, current, {path}).ok()) << path;
    EXPECT_EQ(ApplyVirtualClusterPatch(current, current, {path})->generation, 3) << path;
  }
  EXPECT_EQ(ApplyVirtualClusterPatch(current, patch, {"api_limits.pods"}).status().violations()[0].field,
            "update_mask");
}

TEST(ApplyVirtualClusterPatch, SettingWhatIsThereKeepsTheGeneration) {
  auto same = ApplyVirtualClusterPatch(Current(), Current(), {"capacity", "quota", "queue"});
  ASSERT_TRUE(same.ok());
  EXPECT_EQ(same->generation, 3);
}

TEST(ApplyVirtualClusterPatch, RefusesImmutableOutputAndUnknownPathsNamingThem) {
  for (const std::string path : {"name", "tenant"}) {
    auto r = ApplyVirtualClusterPatch(Current(), Patch(), {"display_name", path});
    ASSERT_FALSE(r.ok()) << path;
    EXPECT_EQ(r.status().code(), Code::kInvalidArgument);
    EXPECT_EQ(r.status().violations()[0].field, path);
    EXPECT_EQ(r.status().violations()[0].description, "is immutable");
  }
  for (const std::string path : {"state", "conditions", "reservation", "host_namespace", "endpoint", "etag",
                                 "generation", "create_time", "update_time", "conditions.type"}) {
    auto r = ApplyVirtualClusterPatch(Current(), Patch(), {path});
    ASSERT_FALSE(r.ok()) << path;
    EXPECT_EQ(r.status().code(), Code::kInvalidArgument);
    EXPECT_EQ(r.status().violations()[0].field, path.substr(0, path.find('.')));
    EXPECT_NE(r.status().message().find("output only"), std::string::npos);
  }
  for (const std::string path : {"labels", "quota.gpus", "queue.weight", "", "display_name.x", "*"}) {
    auto r = ApplyVirtualClusterPatch(Current(), Patch(), {path});
    ASSERT_FALSE(r.ok()) << path;
    EXPECT_EQ(r.status().violations()[0].field, "update_mask") << path;
    EXPECT_NE(r.status().message().find("updatable fields are display_name, capacity, quota, queue"),
              std::string::npos);
  }
  auto sub = ApplyVirtualClusterPatch(Current(), Patch(), {"capacity.mig"});
  ASSERT_FALSE(sub.ok());
  EXPECT_EQ(sub.status().violations()[0].field, "capacity.mig");
  auto escaped = ApplyVirtualClusterPatch(Current(), Patch(), {"x\x1b[2J"});
  EXPECT_EQ(escaped.status().message().find('\x1b'), std::string::npos);
  auto empty = ApplyVirtualClusterPatch(Current(), Patch(), {});
  ASSERT_FALSE(empty.ok());
  EXPECT_EQ(empty.status().violations()[0].field, "update_mask");
}

TEST(ApplyVirtualClusterPatch, ADeletingClusterCannotBeChanged) {
  VirtualCluster deleting = Current();
  deleting.state = State::kDeleting;
  for (const std::string path : {"capacity", "display_name", "quota.pods"}) {
    auto r = ApplyVirtualClusterPatch(deleting, Patch(), {path});
    ASSERT_FALSE(r.ok()) << path;
    EXPECT_EQ(r.status().code(), Code::kFailedPrecondition);
  }
  for (State state : {State::kProvisioning, State::kSleeping, State::kFailed}) {
    VirtualCluster vc = Current();
    vc.state = state;
    EXPECT_TRUE(ApplyVirtualClusterPatch(vc, Patch(), {"capacity"}).ok()) << VirtualClusterStateName(state);
  }
}

TEST(RequestSleep, PutsAReadyClusterToSleepAndBumpsTheGeneration) {
  VirtualCluster ready = Current();
  ready.state = State::kReady;
  auto asleep = RequestSleep(ready);
  ASSERT_TRUE(asleep.ok()) << asleep.status().ToString();
  EXPECT_EQ(asleep->state, State::kSleeping);
  EXPECT_EQ(asleep->generation, ready.generation + 1);
  EXPECT_EQ(asleep->capacity, ready.capacity);
  EXPECT_EQ(asleep->version, ready.version);  // the caller's
  // Again: nothing more to ask.
  auto again = RequestSleep(*asleep);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->state, State::kSleeping);
  EXPECT_EQ(again->generation, asleep->generation);
}

TEST(RequestSleep, RefusesEveryStateButReadyNamingIt) {
  for (State state : {State::kProvisioning, State::kDeleting, State::kFailed}) {
    VirtualCluster vc = Current();
    vc.state = state;
    auto r = RequestSleep(vc);
    ASSERT_FALSE(r.ok()) << VirtualClusterStateName(state);
    EXPECT_EQ(r.status().code(), Code::kFailedPrecondition);
    EXPECT_EQ(r.status().violations()[0].field, "state");
    EXPECT_NE(r.status().message().find(std::string(VirtualClusterStateName(state))), std::string::npos)
        << r.status().message();
  }
}

TEST(RequestWake, WakesASleepingClusterIntoProvisioningAndIsIdempotentOnceAwake) {
  VirtualCluster asleep = Current();
  asleep.state = State::kSleeping;
  auto woken = RequestWake(asleep);
  ASSERT_TRUE(woken.ok()) << woken.status().ToString();
  EXPECT_EQ(woken->state, State::kProvisioning);
  EXPECT_EQ(woken->generation, asleep.generation + 1);
  for (State state : {State::kReady, State::kProvisioning}) {
    VirtualCluster vc = Current();
    vc.state = state;
    auto r = RequestWake(vc);
    ASSERT_TRUE(r.ok()) << VirtualClusterStateName(state);
    EXPECT_EQ(r->state, state);
    EXPECT_EQ(r->generation, vc.generation);
  }
  for (State state : {State::kDeleting, State::kFailed}) {
    VirtualCluster vc = Current();
    vc.state = state;
    auto r = RequestWake(vc);
    ASSERT_FALSE(r.ok()) << VirtualClusterStateName(state);
    EXPECT_EQ(r.status().code(), Code::kFailedPrecondition);
    EXPECT_EQ(r.status().violations()[0].field, "state");
    EXPECT_NE(r.status().message().find(std::string(VirtualClusterStateName(state))), std::string::npos);
  }
}

}  // namespace
}  // namespace septa::tenancy
