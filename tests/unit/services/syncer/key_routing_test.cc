// SyncerController::Reconcile routes a key by its type (syncer_keys.h) to
// the part that reconciles it. With a syncer that holds no shard (its
// triggers' keys are dropped), the test hands it each key itself and looks
// for what only that part does. The remaining shapes (events, tokens,
// nodes, pod groups) go through the same std::visit; their parts' tests
// (token_secrets_test, pod_groups_test, the nodes and events cases of
// syncer_controller_test) run them through the queue.
#include <gtest/gtest.h>

#include "tests/support/fake_lease_store.h"
#include "tests/unit/services/syncer/syncer_fixture.h"

namespace septa::syncer::testing {
namespace {

using reconcile::Outcome;

class SyncerKeyRoutingTest : public SyncerFixture {
 protected:
  void StartSyncerHoldingNoShard() {
    syncer_.reset();
    StartSyncer(nullptr, nullptr, &no_shards_);
  }
  bool HostHas(const kube::Resource& resource, const std::string& name) {
    return host_->Get(resource, HostNamespace(), HostName(name)).ok();
  }
  Outcome::Kind Reconcile(const SyncerKey& key) { return syncer_->Reconcile(key).kind(); }

  core::FakeLeaseStore leases_;
  reconcile::ShardLeases no_shards_{{.name = "syncer", .holder = "routing"}, leases_, clock_};  // never started
};

TEST_F(SyncerKeyRoutingTest, EachKeyReachesThePartOfItsType) {
  StartSyncerHoldingNoShard();
  const VirtualClusterRef cluster{kTenant, kVcluster};
  ASSERT_EQ(syncer_->watches().Find(cluster), nullptr) << "its first resync's key was another replica's";

  // Not watched: every part's key does nothing (not READY, or another replica's).
  ASSERT_TRUE(virtual_
                  ->Create(kube::kConfigMaps, "default",
                           {{"apiVersion", "v1"},
                            {"kind", "ConfigMap"},
                            {"metadata", {{"name", "cfg"}, {"namespace", "default"}}},
                            {"data", {{"k", "v"}}}})
                  .ok());
  json web = Pod("web");
  web["spec"]["volumes"] = json::array({{{"name", "v"}, {"configMap", {{"name", "cfg"}}}}});
  web["spec"]["containers"][0]["volumeMounts"] = json::array({{{"name", "v"}, {"mountPath", "/etc/v"}}});
  ASSERT_TRUE(virtual_->Create(kube::kPods, "default", web).ok());
  json service = {{"apiVersion", "v1"},
                  {"kind", "Service"},
                  {"metadata", {{"name", "svc"}, {"namespace", "default"}}},
                  {"spec", {{"selector", {{"app", "web"}}}, {"ports", {{{"port", 80}}}}}}};
  ASSERT_TRUE(virtual_->Create(kube::kServices, "default", service).ok());
  for (const SyncerKey& key : std::vector<SyncerKey>{
           PodKey{cluster, "default", "web"}, ObjectKey{cluster, ObjectKind::kService, "default", "svc"},
           ObjectKey{cluster, ObjectKind::kConfigMap, "default", "cfg"}, NodesKey{cluster}, PodGroupsKey{cluster},
           TokenKey{cluster, "default", "uid"}, EventKey{cluster, HostNamespace(), "e"}}) {
    EXPECT_EQ(Reconcile(key), Outcome::Kind::kDone) << EncodeSyncerKey(key);
  }
  EXPECT_FALSE(HostHas(kube::kPods, "web"));
  EXPECT_FALSE(HostHas(kube::kServices, "svc"));
  EXPECT_EQ(syncer_->watches().Find(cluster), nullptr);

  // ClusterKey: the virtual cluster's watch starts.
  EXPECT_EQ(Reconcile(ClusterKey{cluster}), Outcome::Kind::kDone);
  const std::shared_ptr<WatchedCluster> watched = syncer_->watches().Find(cluster);
  ASSERT_NE(watched, nullptr);
  ASSERT_TRUE(watched->pods().Get("default", "web").has_value()) << "the watch's first list is loaded";

  // PodKey: the host pod, after the copy of the config map it mounts.
  EXPECT_EQ(Reconcile(PodKey{cluster, "default", "web"}), Outcome::Kind::kDone);
  EXPECT_TRUE(HostHas(kube::kPods, "web"));
  EXPECT_TRUE(HostHas(kube::kConfigMaps, "cfg"));

  // ObjectKey of a service: ServiceSyncer copies it.
  EXPECT_FALSE(HostHas(kube::kServices, "svc"));
  EXPECT_EQ(Reconcile(ObjectKey{cluster, ObjectKind::kService, "default", "svc"}), Outcome::Kind::kDone);
  EXPECT_TRUE(HostHas(kube::kServices, "svc"));

  // ObjectKey of a config map: ObjectCopier deletes the copy of one that is gone.
  ASSERT_TRUE(virtual_->Delete(kube::kConfigMaps, "default", "cfg").ok());
  auto config_maps = watched->Objects(kube::kConfigMaps);
  ASSERT_TRUE(config_maps.ok());
  ASSERT_TRUE(Eventually([&] { return !(*config_maps)->Get("default", "cfg").has_value(); }));
  EXPECT_EQ(Reconcile(ObjectKey{cluster, ObjectKind::kConfigMap, "default", "cfg"}), Outcome::Kind::kDone);
  EXPECT_FALSE(HostHas(kube::kConfigMaps, "cfg"));
  EXPECT_TRUE(HostHas(kube::kServices, "svc")) << "a config map's key is not a service's";
  EXPECT_TRUE(HostHas(kube::kPods, "web"));

  // A key given as text is decoded into the same route.
  const std::optional<SyncerKey> decoded = reconcile::DecodeKey<SyncerKey>("acme/train/default/web");
  ASSERT_TRUE(decoded.has_value());
  EXPECT_EQ(*decoded, SyncerKey(PodKey{cluster, "default", "web"}));
  EXPECT_NE(Reconcile(*decoded), Outcome::Kind::kError) << "a running pod's look (its token's refresh is requeued)";
  EXPECT_TRUE(HostHas(kube::kPods, "web"));
}

}  // namespace
}  // namespace septa::syncer::testing
