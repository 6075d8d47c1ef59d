// Host names two virtual objects map to (tenancy/sync/name_collisions.h,
// ../shared/docs/HOSTILE-TENANT-FINDINGS.md M3): "q-x-r" in namespace "s"
// and "q" in "r-x-s" both map to "q-x-r-x-s-x-train". For every kind the
// syncer copies, the object that holds the host name keeps it untouched, the
// newcomer is refused with a SyncRefused event naming the collision, and it
// gets its copy once the holder is gone. Against real parts (syncer_fixture.h).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tenancy/sync/bookkeeping.h"
#include "tests/support/fake_lease_store.h"
#include "tests/unit/services/syncer/syncer_fixture.h"

namespace septa::syncer::testing {
namespace {

namespace tsync = tenancy::sync;

class SyncerNameCollisionsTest : public SyncerFixture {
 protected:
  void SetUp() override {
    SyncerFixture::SetUp();
    if (HasFatalFailure()) return;
    for (const char* ns : {"s", "r-x-s", "c", "b-x-c"}) {
      ASSERT_TRUE(virtual_
                      ->Create(kube::kNamespaces, "",
                               {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", ns}}}})
                      .ok());
    }
  }

  static json In(json object, const std::string& ns) {
    object["metadata"]["namespace"] = ns;
    return object;
  }
  std::optional<json> Virtual(const kube::Resource& resource, const std::string& ns, const std::string& name) {
    auto got = virtual_->Get(resource, ns, name);
    return got.ok() ? std::optional<json>(*std::move(got)) : std::nullopt;
  }
  std::optional<json> Host(const kube::Resource& resource, const std::string& host_name) {
    auto got = host_->Get(resource, HostNamespace(), host_name);
    return got.ok() ? std::optional<json>(*std::move(got)) : std::nullopt;
  }
  // The virtual object a host object records, "<namespace>/<name>".
  std::string Records(const std::optional<json>& host_object) {
    if (!host_object) return "";
    auto ref = tsync::VirtualRefOf(*host_object, kTenant, kVcluster);
    return ref ? ref->ns + "/" + ref->name : "";
  }
  // Whether `kind` object `ns`/`name` has a SyncRefused event whose message holds `text`.
  bool RefusedWith(const std::string& ns, const std::string& kind, const std::string& name, const std::string& text) {
    auto events = virtual_->List(kube::kEvents, ns);
    if (!events.ok()) return false;
    for (const auto& item : events->items) {
      const json event = item.ToJson();
      if (event.value("reason", "") == "SyncRefused" && event["involvedObject"].value("kind", "") == kind &&
          event["involvedObject"].value("name", "") == name &&
          event.value("message", "").find(text) != std::string::npos) {
        return true;
      }
    }
    return false;
  }
  bool Running(const std::string& ns, const std::string& name) {
    auto pod = Virtual(kube::kPods, ns, name);
    return pod && tsync::StringField(*pod, "status", "phase") == "Running";
  }
  static json Claim(const std::string& ns, const std::string& name) {
    return {{"apiVersion", "v1"},
            {"kind", "PersistentVolumeClaim"},
            {"metadata", {{"name", name}, {"namespace", ns}}},
            {"spec", {{"accessModes", {"ReadWriteOnce"}}, {"resources", {{"requests", {{"storage", "1Gi"}}}}}}}};
  }
  static json PodWithClaim(const std::string& ns, const std::string& name, const std::string& claim) {
    json pod = In(Pod(name), ns);
    pod["spec"]["volumes"] = {{{"name", "data"}, {"persistentVolumeClaim", {{"claimName", claim}}}}};
    return pod;
  }

  // The syncer again, now one that acts on no key by itself (it holds no
  // shard: the keys its triggers queue are dropped) and whose cache of the
  // host pods keeps its first list (the host refuses that watch): the test
  // looks at each key itself, in an order that workers racing one another
  // and the host informer may take. Returns the virtual cluster's watch.
  std::shared_ptr<WatchedCluster> StartSyncerByHand() {
    syncer_.reset();
    host_pod_watches_fail_ = true;
    StartSyncer(nullptr, nullptr, &no_shards_);
    EXPECT_EQ(syncer_->Reconcile(ClusterKey{{kTenant, kVcluster}}).kind(), reconcile::Outcome::Kind::kDone);
    return syncer_->watches().Find({kTenant, kVcluster});
  }
  reconcile::Outcome::Kind LookAtPod(const std::string& ns, const std::string& name) {
    return syncer_->Reconcile(PodKey{{kTenant, kVcluster}, ns, name}).kind();
  }
  reconcile::Outcome::Kind LookAt(const kube::Resource& resource, const std::string& ns, const std::string& name) {
    return syncer_->Reconcile(*ObjectKeyOf({kTenant, kVcluster}, resource, ns, name)).kind();
  }
  // Whether the syncer's watch of the virtual cluster has `resource` `ns`/`name`.
  static bool Seen(WatchedCluster& cluster, const kube::Resource& resource, const std::string& ns,
                   const std::string& name) {
    if (&resource == &kube::kPods) return cluster.pods().Get(ns, name).has_value();
    auto informer = cluster.Objects(resource);
    return informer.ok() && (*informer)->Get(ns, name).has_value();
  }

  core::FakeLeaseStore leases_;
  reconcile::ShardLeases no_shards_{{.name = "syncer", .holder = "by-hand"}, leases_, clock_};  // never started
};

TEST_F(SyncerNameCollisionsTest, APodWhoseHostNameIsAnothersIsRefusedAndTheOtherRunsOnUntilItGoes) {
  ASSERT_TRUE(virtual_->Create(kube::kPods, "r-x-s", In(Pod("q"), "r-x-s")).ok());
  ASSERT_TRUE(Eventually([&] { return Running("r-x-s", "q"); }));
  const std::string host_name = "q-x-r-x-s-x-train";
  ASSERT_EQ(Records(Host(kube::kPods, host_name)), "r-x-s/q");
  const std::string host_uid = tsync::MetadataField(*Host(kube::kPods, host_name), "uid");
  const std::string virtual_uid = tsync::MetadataField(*Virtual(kube::kPods, "r-x-s", "q"), "uid");

  ASSERT_TRUE(virtual_->Create(kube::kPods, "s", In(Pod("q-x-r"), "s")).ok());
  ASSERT_TRUE(Eventually([&] { return RefusedWith("s", "Pod", "q-x-r", "is the copy of Pod r-x-s/q"); }));
  ASSERT_TRUE(syncer_->AwaitIdle(10s));
  auto refused = Virtual(kube::kPods, "s", "q-x-r");
  ASSERT_TRUE(refused.has_value());
  EXPECT_EQ(tsync::StringField(*refused, "status", "phase"), "Pending");
  EXPECT_THAT((*refused)["status"].value("conditions", json::array()).dump(), ::testing::HasSubstr("SyncRefused"));
  // The holder is untouched, on both sides.
  EXPECT_EQ(tsync::MetadataField(*Host(kube::kPods, host_name), "uid"), host_uid);
  EXPECT_EQ(tsync::MetadataField(*Virtual(kube::kPods, "r-x-s", "q"), "uid"), virtual_uid);
  EXPECT_TRUE(Running("r-x-s", "q"));

  // The holder goes: the newcomer gets the host name (level-based: it was looked at again).
  ASSERT_TRUE(virtual_->Delete(kube::kPods, "r-x-s", "q").ok());
  ASSERT_TRUE(Eventually([&] { return Records(Host(kube::kPods, host_name)) == "s/q-x-r" && Running("s", "q-x-r"); }));
}

// Config maps and secrets: the newcomer's pod would mount the holder's copy.
struct CopiedKindCase {
  const kube::Resource* resource;
  std::string kind;
  json volume;  // a volume of the object named "%"
};
// Its kind: CTest's names of the cases (gtest_discover_tests adds the
// parameter) would otherwise hold its bytes, addresses that change with
// every build.
void PrintTo(const CopiedKindCase& c, std::ostream* out) { *out << c.kind; }

class SyncerCopyCollisionsTest : public SyncerNameCollisionsTest, public ::testing::WithParamInterface<CopiedKindCase> {
 protected:
  json Object(const std::string& ns, const std::string& name, const std::string& value) const {
    // `value` is base64 (a secret's data must be): it only tells the two apart.
    return {{"apiVersion", "v1"},
            {"kind", GetParam().kind},
            {"metadata", {{"name", name}, {"namespace", ns}}},
            {"data", {{"v", value}}}};
  }
  json PodUsing(const std::string& ns, const std::string& name, const std::string& object) const {
    json volume = GetParam().volume;
    std::string text = volume.dump();
    text.replace(text.find('%'), 1, object);
    json pod = In(Pod(name), ns);
    pod["spec"]["volumes"] = json::array({json::parse(text)});
    pod["spec"]["containers"][0]["volumeMounts"] = json::array({{{"name", "v"}, {"mountPath", "/etc/v"}}});
    return pod;
  }
  // With the syncer started by hand: pod c/m, which uses host name
  // cfg-x-b-x-c-x-train, looked at and given its host pod; then "b-x-c"
  // makes its object and a pod of that host name (and `more`, if given).
  // Returns once the syncer's caches show them, none looked at yet.
  std::shared_ptr<WatchedCluster> CHoldsTheHostNameThenBxcComes(const std::function<void()>& more = {}) {
    const std::shared_ptr<WatchedCluster> cluster = StartSyncerByHand();
    EXPECT_TRUE(cluster);
    if (!cluster) return nullptr;
    const kube::Resource& resource = *GetParam().resource;
    EXPECT_TRUE(virtual_->Create(kube::kPods, "c", PodUsing("c", "m", "cfg-x-b")).ok());
    EXPECT_TRUE(Eventually([&] { return Seen(*cluster, kube::kPods, "c", "m"); }));
    EXPECT_EQ(LookAtPod("c", "m"), reconcile::Outcome::Kind::kDone);
    EXPECT_TRUE(Host(kube::kPods, "m-x-c-x-train").has_value());
    EXPECT_TRUE(virtual_->Create(resource, "b-x-c", Object("b-x-c", "cfg", "dmljdGlt")).ok());
    EXPECT_TRUE(virtual_->Create(kube::kPods, "b-x-c", PodUsing("b-x-c", "a", "cfg")).ok());
    if (more) more();
    EXPECT_TRUE(Eventually(
        [&] { return Seen(*cluster, kube::kPods, "b-x-c", "a") && Seen(*cluster, resource, "b-x-c", "cfg"); }));
    return cluster;
  }
};

TEST_P(SyncerCopyCollisionsTest, TheHoldersCopyIsNeverWrittenOrDeletedAndTheNewcomerIsRefused) {
  const kube::Resource& resource = *GetParam().resource;
  const std::string host_name = "cfg-x-b-x-c-x-train";
  ASSERT_TRUE(virtual_->Create(resource, "b-x-c", Object("b-x-c", "cfg", "dmljdGlt")).ok());
  ASSERT_TRUE(virtual_->Create(kube::kPods, "b-x-c", PodUsing("b-x-c", "a", "cfg")).ok());
  ASSERT_TRUE(Eventually([&] { return Running("b-x-c", "a") && Records(Host(resource, host_name)) == "b-x-c/cfg"; }));
  const std::string copy_uid = tsync::MetadataField(*Host(resource, host_name), "uid");

  ASSERT_TRUE(virtual_->Create(resource, "c", Object("c", "cfg-x-b", "bWFsbG9yeQ==")).ok());
  ASSERT_TRUE(virtual_->Create(kube::kPods, "c", PodUsing("c", "m", "cfg-x-b")).ok());
  const std::string holder = GetParam().kind + " b-x-c/cfg";
  ASSERT_TRUE(Eventually(
      [&] { return RefusedWith("c", "Pod", "m", holder) && RefusedWith("c", GetParam().kind, "cfg-x-b", holder); }));
  ASSERT_TRUE(syncer_->AwaitIdle(10s));
  const json copy = *Host(resource, host_name);
  EXPECT_EQ(tsync::MetadataField(copy, "uid"), copy_uid);
  EXPECT_EQ(copy["data"]["v"], "dmljdGlt");
  EXPECT_FALSE(Host(kube::kPods, "m-x-c-x-train").has_value()) << "it would mount b-x-c's " << GetParam().kind;
  EXPECT_TRUE(Running("b-x-c", "a"));

  // The newcomer's object goes: the holder's copy stays.
  ASSERT_TRUE(virtual_->Delete(resource, "c", "cfg-x-b").ok());
  ASSERT_TRUE(syncer_->AwaitIdle(10s));
  ASSERT_TRUE(Host(resource, host_name).has_value());
  EXPECT_EQ(tsync::MetadataField(*Host(resource, host_name), "uid"), copy_uid);

  // It comes back and the holder goes (pod and object): the newcomer is copied and its pod runs.
  ASSERT_TRUE(virtual_->Create(resource, "c", Object("c", "cfg-x-b", "bWFsbG9yeQ==")).ok());
  ASSERT_TRUE(virtual_->Delete(kube::kPods, "b-x-c", "a").ok());
  ASSERT_TRUE(virtual_->Delete(resource, "b-x-c", "cfg").ok());
  ASSERT_TRUE(Eventually([&] { return Records(Host(resource, host_name)) == "c/cfg-x-b" && Running("c", "m"); }));
  EXPECT_EQ((*Host(resource, host_name))["data"]["v"], "bWFsbG9yeQ==");
}

// The other order: a pod of "c" already uses the host name for an object
// that does not exist yet (as a kubelet waits for a config map); the copy
// of "b-x-c"'s object would reach that pod, so it is refused.
TEST_P(SyncerCopyCollisionsTest, AHostNameAPodOfAnotherNamespaceUsesIsNotCopiedTo) {
  const kube::Resource& resource = *GetParam().resource;
  const std::string host_name = "cfg-x-b-x-c-x-train";
  ASSERT_TRUE(virtual_->Create(kube::kPods, "c", PodUsing("c", "m", "cfg-x-b")).ok());
  ASSERT_TRUE(Eventually([&] { return Host(kube::kPods, "m-x-c-x-train").has_value(); }));

  ASSERT_TRUE(virtual_->Create(resource, "b-x-c", Object("b-x-c", "cfg", "dmljdGlt")).ok());
  ASSERT_TRUE(virtual_->Create(kube::kPods, "b-x-c", PodUsing("b-x-c", "a", "cfg")).ok());
  ASSERT_TRUE(Eventually([&] {
    return RefusedWith("b-x-c", "Pod", "a", "pod c/m uses") && RefusedWith("b-x-c", GetParam().kind, "cfg", "pod c/m");
  }));
  ASSERT_TRUE(syncer_->AwaitIdle(10s));
  EXPECT_FALSE(Host(resource, host_name).has_value()) << "pod c/m would mount it";

  // That pod goes: the object is copied and its pod runs.
  ASSERT_TRUE(virtual_->Delete(kube::kPods, "c", "m").ok());
  ASSERT_TRUE(Eventually([&] { return Records(Host(resource, host_name)) == "b-x-c/cfg" && Running("b-x-c", "a"); }));
}

// That order raced (issue 36): pod c/m has its host pod, which the
// syncer's cache does not show yet, when "b-x-c" makes its object and pod
// of that host name, and c/m's key is looked at again before b-x-c/a's.
// c/m came first: it keeps the host name, and b-x-c/a is refused.
TEST_P(SyncerCopyCollisionsTest, APodWithItsHostPodKeepsTheHostNameWhicheverKeyIsLookedAtFirst) {
  const kube::Resource& resource = *GetParam().resource;
  const std::string host_name = "cfg-x-b-x-c-x-train";
  const std::shared_ptr<WatchedCluster> cluster = CHoldsTheHostNameThenBxcComes();
  ASSERT_TRUE(cluster);
  ASSERT_FALSE(HasFailure());
  EXPECT_EQ(LookAtPod("c", "m"), reconcile::Outcome::Kind::kDone);
  EXPECT_EQ(LookAtPod("b-x-c", "a"), reconcile::Outcome::Kind::kDone);
  EXPECT_EQ(LookAt(resource, "b-x-c", "cfg"), reconcile::Outcome::Kind::kDone);

  EXPECT_FALSE(RefusedWith("c", "Pod", "m", "")) << "it came first";
  EXPECT_TRUE(RefusedWith("b-x-c", "Pod", "a", "pod c/m uses"));
  EXPECT_TRUE(RefusedWith("b-x-c", GetParam().kind, "cfg", "pod c/m uses"));
  EXPECT_FALSE(Host(resource, host_name).has_value()) << "pod c/m would mount it";
  EXPECT_FALSE(Host(kube::kPods, "a-x-b-x-c-x-train").has_value());
}

// Likewise when "c" makes its object after "b-x-c" made its own and a pod
// that uses it, and c's object's key is looked at before b-x-c/a's: c/m,
// which has its host pod, gets its copy, and b-x-c/a is refused.
TEST_P(SyncerCopyCollisionsTest, TheObjectOfAPodWithItsHostPodIsCopiedWhatANewcomerUses) {
  const kube::Resource& resource = *GetParam().resource;
  const std::string host_name = "cfg-x-b-x-c-x-train";
  const std::shared_ptr<WatchedCluster> cluster = CHoldsTheHostNameThenBxcComes(
      [&] { ASSERT_TRUE(virtual_->Create(resource, "c", Object("c", "cfg-x-b", "bWFsbG9yeQ==")).ok()); });
  ASSERT_TRUE(cluster);
  ASSERT_TRUE(Eventually([&] { return Seen(*cluster, resource, "c", "cfg-x-b"); }));
  ASSERT_FALSE(HasFailure());
  EXPECT_EQ(LookAt(resource, "c", "cfg-x-b"), reconcile::Outcome::Kind::kDone);
  EXPECT_EQ(LookAtPod("b-x-c", "a"), reconcile::Outcome::Kind::kDone);
  EXPECT_EQ(LookAt(resource, "b-x-c", "cfg"), reconcile::Outcome::Kind::kDone);

  EXPECT_FALSE(RefusedWith("c", GetParam().kind, "cfg-x-b", "")) << "pod c/m came first";
  ASSERT_EQ(Records(Host(resource, host_name)), "c/cfg-x-b");
  EXPECT_EQ((*Host(resource, host_name))["data"]["v"], "bWFsbG9yeQ==");
  EXPECT_TRUE(RefusedWith("b-x-c", "Pod", "a", ""));
  EXPECT_FALSE(Host(kube::kPods, "a-x-b-x-c-x-train").has_value()) << "it would mount c's " << GetParam().kind;
}

INSTANTIATE_TEST_SUITE_P(
    EachCopiedKind, SyncerCopyCollisionsTest,
    ::testing::Values(CopiedKindCase{&kube::kConfigMaps, "ConfigMap", {{"name", "v"}, {"configMap", {{"name", "%"}}}}},
                      CopiedKindCase{&kube::kSecrets, "Secret", {{"name", "v"}, {"secret", {{"secretName", "%"}}}}}),
    [](const ::testing::TestParamInfo<CopiedKindCase>& info) { return info.param.kind; });

TEST_F(SyncerNameCollisionsTest, AServiceWhoseHostNameIsAnothersIsRefusedAndItsDeletionLeavesTheOther) {
  RunningPod("web");  // services are watched once the virtual cluster has a pod
  auto service = [](const std::string& ns, const std::string& name) {
    return json{{"apiVersion", "v1"},
                {"kind", "Service"},
                {"metadata", {{"name", name}, {"namespace", ns}}},
                {"spec", {{"selector", {{"app", name}}}, {"ports", {{{"port", 80}}}}}}};
  };
  const std::string host_name = "web-x-r-x-s-x-train";
  ASSERT_TRUE(virtual_->Create(kube::kServices, "r-x-s", service("r-x-s", "web")).ok());
  // Synced: the virtual service has the host's address (given by two updates of both).
  ASSERT_TRUE(Eventually([&] {
    auto copy = Host(kube::kServices, host_name);
    auto web = Virtual(kube::kServices, "r-x-s", "web");
    return Records(copy) == "r-x-s/web" && web &&
           tsync::StringField(*web, "spec", "clusterIP") == tsync::StringField(*copy, "spec", "clusterIP");
  }));
  ASSERT_TRUE(syncer_->AwaitIdle(10s));
  const json copy = *Host(kube::kServices, host_name);

  ASSERT_TRUE(virtual_->Create(kube::kServices, "s", service("s", "web-x-r")).ok());
  ASSERT_TRUE(Eventually([&] { return RefusedWith("s", "Service", "web-x-r", "is the copy of Service r-x-s/web"); }));
  ASSERT_TRUE(syncer_->AwaitIdle(10s));
  // Neither updated in place (it was: "the same service to the host") nor deleted with the newcomer.
  EXPECT_EQ(Host(kube::kServices, host_name), copy);
  ASSERT_TRUE(virtual_->Delete(kube::kServices, "s", "web-x-r").ok());
  ASSERT_TRUE(syncer_->AwaitIdle(10s));
  EXPECT_EQ(Host(kube::kServices, host_name), copy);

  ASSERT_TRUE(virtual_->Create(kube::kServices, "s", service("s", "web-x-r")).ok());
  ASSERT_TRUE(virtual_->Delete(kube::kServices, "r-x-s", "web").ok());
  ASSERT_TRUE(Eventually([&] { return Records(Host(kube::kServices, host_name)) == "s/web-x-r"; }));
}

TEST_F(SyncerNameCollisionsTest, AClaimWhoseHostNameIsAnothersIsRefusedAndTheOthersDataStays) {
  const std::string host_name = "data-x-r-x-s-x-train";
  ASSERT_TRUE(virtual_->Create(kube::kPersistentVolumeClaims, "r-x-s", Claim("r-x-s", "data")).ok());
  ASSERT_TRUE(virtual_->Create(kube::kPods, "r-x-s", PodWithClaim("r-x-s", "db", "data")).ok());
  ASSERT_TRUE(Eventually([&] { return Records(Host(kube::kPersistentVolumeClaims, host_name)) == "r-x-s/data"; }));
  const std::string copy_uid = tsync::MetadataField(*Host(kube::kPersistentVolumeClaims, host_name), "uid");

  ASSERT_TRUE(virtual_->Create(kube::kPersistentVolumeClaims, "s", Claim("s", "data-x-r")).ok());
  ASSERT_TRUE(virtual_->Create(kube::kPods, "s", PodWithClaim("s", "thief", "data-x-r")).ok());
  const std::string holder = "PersistentVolumeClaim r-x-s/data";
  ASSERT_TRUE(Eventually([&] {
    return RefusedWith("s", "PersistentVolumeClaim", "data-x-r", holder) && RefusedWith("s", "Pod", "thief", holder);
  }));
  ASSERT_TRUE(syncer_->AwaitIdle(10s));
  EXPECT_FALSE(Host(kube::kPods, "thief-x-s-x-train").has_value()) << "it would mount r-x-s's volume";
  ASSERT_TRUE(virtual_->Delete(kube::kPersistentVolumeClaims, "s", "data-x-r").ok());
  ASSERT_TRUE(syncer_->AwaitIdle(10s));
  auto kept = Host(kube::kPersistentVolumeClaims, host_name);
  ASSERT_TRUE(kept.has_value()) << "another namespace's data is never deleted";
  EXPECT_EQ(tsync::MetadataField(*kept, "uid"), copy_uid);
}

// As for config maps (SyncerCopyCollisionsTest above), by the claim's own
// key: c/m has its host pod and so keeps the host name of its claim.
TEST_F(SyncerNameCollisionsTest, TheClaimOfAPodWithItsHostPodIsCopiedWhatANewcomerUses) {
  const std::string host_name = "data-x-b-x-c-x-train";
  const std::shared_ptr<WatchedCluster> cluster = StartSyncerByHand();
  ASSERT_TRUE(cluster);
  ASSERT_TRUE(virtual_->Create(kube::kPods, "c", PodWithClaim("c", "m", "data-x-b")).ok());
  ASSERT_TRUE(Eventually([&] { return Seen(*cluster, kube::kPods, "c", "m"); }));
  ASSERT_EQ(LookAtPod("c", "m"), reconcile::Outcome::Kind::kDone);
  ASSERT_TRUE(Host(kube::kPods, "m-x-c-x-train").has_value());

  ASSERT_TRUE(virtual_->Create(kube::kPersistentVolumeClaims, "b-x-c", Claim("b-x-c", "data")).ok());
  ASSERT_TRUE(virtual_->Create(kube::kPods, "b-x-c", PodWithClaim("b-x-c", "a", "data")).ok());
  ASSERT_TRUE(virtual_->Create(kube::kPersistentVolumeClaims, "c", Claim("c", "data-x-b")).ok());
  ASSERT_TRUE(Eventually([&] {
    return Seen(*cluster, kube::kPods, "b-x-c", "a") &&
           Seen(*cluster, kube::kPersistentVolumeClaims, "b-x-c", "data") &&
           Seen(*cluster, kube::kPersistentVolumeClaims, "c", "data-x-b");
  }));
  EXPECT_EQ(LookAt(kube::kPersistentVolumeClaims, "c", "data-x-b"), reconcile::Outcome::Kind::kDone);
  EXPECT_EQ(LookAtPod("b-x-c", "a"), reconcile::Outcome::Kind::kDone);
  EXPECT_EQ(LookAt(kube::kPersistentVolumeClaims, "b-x-c", "data"), reconcile::Outcome::Kind::kDone);

  EXPECT_FALSE(RefusedWith("c", "PersistentVolumeClaim", "data-x-b", "")) << "pod c/m came first";
  EXPECT_EQ(Records(Host(kube::kPersistentVolumeClaims, host_name)), "c/data-x-b");
  EXPECT_TRUE(RefusedWith("b-x-c", "Pod", "a", ""));
  EXPECT_FALSE(Host(kube::kPods, "a-x-b-x-c-x-train").has_value()) << "it would mount c's claim";
}

// Inside one namespace: pod "a" with ephemeral volume "b-c" and pod "a-b"
// with volume "c" name one claim, "a-b-c"; the kubelet mounts it for its
// owner only, and so does the syncer.
TEST_F(SyncerNameCollisionsTest, AnEphemeralVolumesClaimOfAnotherPodIsNotMounted) {
  auto with_ephemeral = [](const std::string& name, const std::string& volume) {
    const json claim_spec = {{"accessModes", {"ReadWriteOnce"}}, {"resources", {{"requests", {{"storage", "1Gi"}}}}}};
    json pod = Pod(name);
    pod["spec"]["volumes"] = json::array();
    pod["spec"]["volumes"].push_back(
        {{"name", volume}, {"ephemeral", {{"volumeClaimTemplate", {{"spec", claim_spec}}}}}});
    return pod;
  };
  ASSERT_TRUE(virtual_->Create(kube::kPods, "default", with_ephemeral("a", "b-c")).ok());
  const std::string uid = tsync::MetadataField(*VirtualPod("a"), "uid");
  // What the ephemeral volume controller makes for it (kubesim has none).
  ASSERT_TRUE(
      virtual_
          ->Create(
              kube::kPersistentVolumeClaims, "default",
              {{"apiVersion", "v1"},
               {"kind", "PersistentVolumeClaim"},
               {"metadata",
                {{"name", "a-b-c"},
                 {"ownerReferences",
                  {{{"apiVersion", "v1"}, {"kind", "Pod"}, {"name", "a"}, {"uid", uid}, {"controller", true}}}}}},
               {"spec", {{"accessModes", {"ReadWriteOnce"}}, {"resources", {{"requests", {{"storage", "1Gi"}}}}}}}})
          .ok());
  ASSERT_TRUE(Eventually([&] { return HostPod("a").has_value(); }));
  ASSERT_TRUE(virtual_->Create(kube::kPods, "default", with_ephemeral("a-b", "c")).ok());
  ASSERT_TRUE(Eventually([&] { return RefusedWith("default", "Pod", "a-b", "a-b-c was not created for this pod"); }));
  ASSERT_TRUE(syncer_->AwaitIdle(10s));
  EXPECT_FALSE(HostPod("a-b").has_value());
}

TEST_F(SyncerNameCollisionsTest, AGangWhoseHostNameIsAnothersIsRefusedAndTheOthersGroupKeepsItsSize) {
  auto member = [](const std::string& ns, const std::string& name, const std::string& gang, const std::string& size) {
    json pod = In(Pod(name), ns);
    pod["metadata"]["annotations"] = {{"septa.dev/gang", gang}, {"septa.dev/gang-size", size}};
    return pod;
  };
  const std::string group = "g-x-r-x-s-x-train";
  ASSERT_TRUE(virtual_->Create(kube::kPods, "r-x-s", member("r-x-s", "w0", "g", "1")).ok());
  ASSERT_TRUE(Eventually([&] { return Host(kube::kKaiPodGroups, group).has_value() && Running("r-x-s", "w0"); }));
  ASSERT_TRUE(virtual_->Create(kube::kPods, "s", member("s", "x0", "g-x-r", "5")).ok());
  ASSERT_TRUE(Eventually([&] { return RefusedWith("s", "Pod", "x0", "is a gang's of namespace \"r-x-s\""); }));
  ASSERT_TRUE(syncer_->AwaitIdle(10s));
  EXPECT_EQ((*Host(kube::kKaiPodGroups, group))["spec"]["minMember"], 1);
  EXPECT_FALSE(Host(kube::kPods, "x0-x-s-x-train").has_value());
}

}  // namespace
}  // namespace septa::syncer::testing
