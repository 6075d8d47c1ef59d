// A virtual cluster's PersistentVolumeClaims on the host, against real
// parts: copied once a pod uses one, bound on the host (the test plays the
// storage provisioner: kubesim binds no claim) with the binding flowing up,
// a grown request carried down, the copy kept while no pod uses it and
// deleted with the virtual claim, a claim naming a host volume refused.
#include <gtest/gtest.h>

#include "tenancy/sync/bookkeeping.h"
#include "tests/unit/services/syncer/syncer_fixture.h"

namespace septa::syncer::testing {
namespace {

namespace tsync = tenancy::sync;

class SyncerClaimsTest : public SyncerFixture {
 protected:
  static json Claim(const std::string& name, json spec_extra = json::object()) {
    json spec = {{"accessModes", {"ReadWriteOnce"}},
                 {"storageClassName", "fast"},
                 {"resources", {{"requests", {{"storage", "1Gi"}}}}}};
    spec.update(spec_extra);
    return {{"apiVersion", "v1"},
            {"kind", "PersistentVolumeClaim"},
            {"metadata", {{"name", name}, {"namespace", "default"}}},
            {"spec", std::move(spec)}};
  }
  static json PodUsing(const std::string& name, const std::string& claim) {
    json pod = Pod(name);
    pod["spec"]["volumes"] = {{{"name", "data"}, {"persistentVolumeClaim", {{"claimName", claim}}}}};
    pod["spec"]["containers"][0]["volumeMounts"] = {{{"name", "data"}, {"mountPath", "/data"}}};
    return pod;
  }
  std::optional<json> HostClaim(const std::string& name) {
    auto got = host_->Get(kube::kPersistentVolumeClaims, HostNamespace(), HostName(name));
    return got.ok() ? std::optional<json>(*std::move(got)) : std::nullopt;
  }
  std::optional<json> VirtualClaim(const std::string& name) {
    auto got = virtual_->Get(kube::kPersistentVolumeClaims, "default", name);
    return got.ok() ? std::optional<json>(*std::move(got)) : std::nullopt;
  }
  // What a storage provisioner and the volume controller do: the host claim bound to a volume.
  void BindOnHost(const std::string& name, const std::string& capacity) {
    json status = {
        {"status", {{"phase", "Bound"}, {"accessModes", {"ReadWriteOnce"}}, {"capacity", {{"storage", capacity}}}}}};
    kube::PatchOptions options;
    options.subresource = "status";
    auto patched = host_->Patch(kube::kPersistentVolumeClaims, HostNamespace(), HostName(name), kube::PatchType::kMerge,
                                status.dump(), options);
    ASSERT_TRUE(patched.ok()) << patched.status().ToString();
  }
};

TEST_F(SyncerClaimsTest, AClaimAPodUsesIsOnTheHostItsBindingFlowsUpAndItStaysUntilTheTenantDeletesIt) {
  ASSERT_TRUE(virtual_->Create(kube::kPersistentVolumeClaims, "default", Claim("data")).ok());
  ASSERT_TRUE(syncer_->AwaitIdle(10s));
  auto cluster = syncer_->watches().Find({kTenant, kVcluster});
  ASSERT_NE(cluster, nullptr);
  EXPECT_FALSE(cluster->WatchesObjects(kube::kPersistentVolumeClaims)) << "no pod uses a claim yet";
  EXPECT_FALSE(HostClaim("data").has_value());

  ASSERT_TRUE(virtual_->Create(kube::kPods, "default", PodUsing("db", "data")).ok());
  ASSERT_TRUE(Eventually([&] { return HostClaim("data").has_value() && HostPod("db").has_value(); }));
  EXPECT_TRUE(cluster->WatchesObjects(kube::kPersistentVolumeClaims));
  const json host = *HostClaim("data");
  EXPECT_EQ(host["spec"]["storageClassName"], "fast");
  EXPECT_EQ(host["spec"]["accessModes"], json({"ReadWriteOnce"}));
  EXPECT_EQ(host["spec"]["resources"]["requests"]["storage"], "1Gi");
  auto ref = tsync::VirtualRefOf(host, kTenant, kVcluster);
  ASSERT_TRUE(ref.has_value());
  EXPECT_EQ(ref->uid, tsync::MetadataField(*VirtualClaim("data"), "uid"));
  EXPECT_EQ((*HostPod("db"))["spec"]["volumes"][0]["persistentVolumeClaim"]["claimName"], HostName("data"));

  BindOnHost("data", "1Gi");
  ASSERT_TRUE(Eventually([&] {
    auto claim = VirtualClaim("data");
    return claim && tsync::StringField(*claim, "status", "phase") == "Bound";
  }));
  EXPECT_EQ((*VirtualClaim("data"))["status"]["capacity"]["storage"], "1Gi");

  // A grown request is carried down (expansion); converged, nothing is written.
  json grown = *VirtualClaim("data");
  grown["spec"]["resources"]["requests"]["storage"] = "2Gi";
  ASSERT_TRUE(virtual_->Update(kube::kPersistentVolumeClaims, "default", grown).ok());
  ASSERT_TRUE(Eventually([&] {
    auto claim = HostClaim("data");
    return claim && (*claim)["spec"]["resources"]["requests"].value("storage", "") == "2Gi";
  }));
  ASSERT_TRUE(syncer_->AwaitIdle(10s));
  const std::string host_version = tsync::MetadataField(*HostClaim("data"), "resourceVersion");
  const std::string virtual_version = tsync::MetadataField(*VirtualClaim("data"), "resourceVersion");
  syncer_->VirtualClusterChanged(std::string(kTenant) + "/" + kVcluster);
  ASSERT_TRUE(syncer_->AwaitIdle(10s));
  EXPECT_EQ(tsync::MetadataField(*HostClaim("data"), "resourceVersion"), host_version);
  EXPECT_EQ(tsync::MetadataField(*VirtualClaim("data"), "resourceVersion"), virtual_version);

  // The pod goes; the claim's data stays.
  ASSERT_TRUE(virtual_->Delete(kube::kPods, "default", "db").ok());
  ASSERT_TRUE(Eventually([&] { return !HostPod("db").has_value(); }));
  ASSERT_TRUE(syncer_->AwaitIdle(10s));
  EXPECT_TRUE(HostClaim("data").has_value()) << "a claim's copy holds data: it outlives the pods that use it";

  ASSERT_TRUE(virtual_->Delete(kube::kPersistentVolumeClaims, "default", "data").ok());
  ASSERT_TRUE(Eventually([&] { return !HostClaim("data").has_value(); }));
}

TEST_F(SyncerClaimsTest, AClaimNamingAHostVolumeIsRefusedWithAnEventAndNotCopied) {
  ASSERT_TRUE(
      virtual_->Create(kube::kPersistentVolumeClaims, "default", Claim("steal", {{"volumeName", "pv-of-globex"}}))
          .ok());
  ASSERT_TRUE(virtual_->Create(kube::kPods, "default", PodUsing("thief", "steal")).ok());
  ASSERT_TRUE(
      Eventually([&] { return HasRefusalEvent(*virtual_, "PersistentVolumeClaim", "steal", "spec.volumeName"); }));
  ASSERT_TRUE(syncer_->AwaitIdle(10s));
  EXPECT_FALSE(HostClaim("steal").has_value());
}

TEST_F(SyncerClaimsTest, ACopyOfAnEarlierClaimOfThatNameIsReplacedAndACopyWhoseClaimWentWhileNoSyncerRanIsDeleted) {
  ASSERT_TRUE(virtual_->Create(kube::kPersistentVolumeClaims, "default", Claim("data")).ok());
  ASSERT_TRUE(virtual_->Create(kube::kPersistentVolumeClaims, "default", Claim("logs")).ok());
  ASSERT_TRUE(virtual_->Create(kube::kPods, "default", PodUsing("db", "data")).ok());
  ASSERT_TRUE(Eventually([&] { return HostClaim("data").has_value() && HostClaim("logs").has_value(); }))
      << "every claim is synced once the claims are watched";
  const std::string first_uid = tsync::MetadataField(*HostClaim("data"), "uid");

  syncer_.reset();
  ASSERT_TRUE(virtual_->Delete(kube::kPersistentVolumeClaims, "default", "data").ok());
  ASSERT_TRUE(virtual_->Create(kube::kPersistentVolumeClaims, "default", Claim("data")).ok());
  ASSERT_TRUE(virtual_->Delete(kube::kPersistentVolumeClaims, "default", "logs").ok());
  StartSyncer();
  ASSERT_TRUE(Eventually([&] {
    auto claim = HostClaim("data");
    if (!claim || tsync::MetadataField(*claim, "uid") == first_uid) return false;
    auto ref = tsync::VirtualRefOf(*claim, kTenant, kVcluster);
    return ref && ref->uid == tsync::MetadataField(*VirtualClaim("data"), "uid");
  }));
  ASSERT_TRUE(Eventually([&] { return !HostClaim("logs").has_value(); }));
}

}  // namespace
}  // namespace septa::syncer::testing
