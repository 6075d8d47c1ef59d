// Gangs on the host through the syncer (KAI, as the fixture's host): the
// PodGroup is there before its members' host pods, which name it; it goes
// when the gang's last pod goes, and one a stopped syncer left behind is
// deleted by the next one's resync.
#include <gtest/gtest.h>

#include "services/kube/resources.h"
#include "tenancy/sync/gangs.h"
#include "tests/unit/services/syncer/syncer_fixture.h"

namespace septa::syncer::testing {
namespace {

namespace tsync = tenancy::sync;

class SyncerGangsTest : public SyncerFixture {
 protected:
  static json Member(const std::string& name, const std::string& gang, int size) {
    json pod = Pod(name);
    pod["metadata"]["annotations"] = {{std::string(tsync::kGangAnnotation), gang},
                                      {std::string(tsync::kGangSizeAnnotation), std::to_string(size)}};
    return pod;
  }
  std::optional<json> PodGroup(const std::string& name) {
    auto got = host_->Get(kube::kKaiPodGroups, HostNamespace(), name);
    return got.ok() ? std::optional<json>(*std::move(got)) : std::nullopt;
  }
};

TEST_F(SyncerGangsTest, AGangsPodGroupComesBeforeItsPodsAndGoesAfterThem) {
  for (const char* name : {"worker-0", "worker-1"}) {
    ASSERT_TRUE(virtual_->Create(kube::kPods, "default", Member(name, "allreduce", 2)).ok());
  }
  const std::string group = HostName("allreduce");
  ASSERT_TRUE(Eventually([&] { return HostPod("worker-0") && HostPod("worker-1"); }));
  auto pod_group = PodGroup(group);
  ASSERT_TRUE(pod_group.has_value()) << "no PodGroup " << group;
  EXPECT_EQ((*pod_group)["spec"]["minMember"], 2);
  EXPECT_EQ((*pod_group)["spec"]["queue"], HostNamespace());
  for (const char* name : {"worker-0", "worker-1"}) {
    const json annotations = (*HostPod(name))["metadata"]["annotations"];
    EXPECT_EQ(annotations.value("pod-group-name", ""), group) << name;
    EXPECT_EQ(annotations.value("kai.scheduler/skip-podgrouper", ""), "true") << name;
  }

  // One member goes: the gang stays; the last goes: its PodGroup with it.
  ASSERT_TRUE(virtual_->Delete(kube::kPods, "default", "worker-0").ok());
  ASSERT_TRUE(Eventually([&] { return !HostPod("worker-0"); }));
  ASSERT_TRUE(syncer_->AwaitIdle(10s));
  EXPECT_TRUE(PodGroup(group).has_value()) << "worker-1 still needs it";
  ASSERT_TRUE(virtual_->Delete(kube::kPods, "default", "worker-1").ok());
  ASSERT_TRUE(Eventually([&] { return !HostPod("worker-1") && !PodGroup(group); }));
}

TEST_F(SyncerGangsTest, APodGroupLeftBehindIsDeletedAtTheNextResync) {
  ASSERT_TRUE(virtual_->Create(kube::kPods, "default", Member("worker-0", "allreduce", 1)).ok());
  ASSERT_TRUE(Eventually([&] { return HostPod("worker-0").has_value(); }));
  // A syncer stops; the gang's pod goes meanwhile, host pod and all.
  syncer_.reset();
  ASSERT_TRUE(virtual_->Delete(kube::kPods, "default", "worker-0").ok());
  ASSERT_TRUE(host_->Delete(kube::kPods, HostNamespace(), HostName("worker-0")).ok());
  ASSERT_TRUE(Eventually([&] { return !HostPod("worker-0"); }));
  ASSERT_TRUE(PodGroup(HostName("allreduce")).has_value());
  StartSyncer();
  ASSERT_TRUE(Eventually([&] { return !PodGroup(HostName("allreduce")); }));
}

}  // namespace
}  // namespace septa::syncer::testing
