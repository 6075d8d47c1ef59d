// Claims on the host: which claims a pod uses, the host copy of a virtual
// claim and what is refused, when a copy is up to date, and the status up.
#include "tenancy/sync/host_claims.h"

#include <gtest/gtest.h>

#include "tenancy/sync/bookkeeping.h"
#include "tenancy/sync/pod_references.h"
#include "tests/unit/tenancy/sync/sample_views.h"

namespace septa::tenancy::sync {
namespace {

using nlohmann::json;

json VirtualClaim(const std::string& name, json spec_extra = json::object()) {
  json spec = {{"accessModes", {"ReadWriteOnce"}},
               {"storageClassName", "fast"},
               {"volumeMode", "Filesystem"},
               {"resources", {{"requests", {{"storage", "10Gi"}}}}}};
  spec.update(spec_extra);
  return {{"apiVersion", "v1"},
          {"kind", "PersistentVolumeClaim"},
          {"metadata",
           {{"name", name},
            {"namespace", "team"},
            {"uid", "uid-" + name},
            {"resourceVersion", "7"},
            {"labels", {{"app", "db"}}},
            {"annotations", {{"kubectl.kubernetes.io/last-applied-configuration", "{}"}}}}},
          {"spec", std::move(spec)}};
}

json Copy(const json& claim) {
  auto result = HostClaim(SampleView(gpu::Tier::kShared), claim);
  EXPECT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_TRUE(std::holds_alternative<json>(*result));
  return std::holds_alternative<json>(*result) ? std::get<json>(*result) : json();
}

Refusal Refused(const json& claim) {
  auto result = HostClaim(SampleView(gpu::Tier::kShared), claim);
  EXPECT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_TRUE(std::holds_alternative<Refusal>(*result));
  return std::holds_alternative<Refusal>(*result) ? std::get<Refusal>(*result) : Refusal{};
}

TEST(SyncClaims, APodUsesItsClaimVolumesAndTheClaimsOfItsEphemeralVolumes) {
  const json pod = {{"metadata", {{"name", "web"}, {"namespace", "team"}}},
                    {"spec",
                     {{"volumes",
                       {{{"name", "data"}, {"persistentVolumeClaim", {{"claimName", "data"}}}},
                        {{"name", "scratch"}, {"ephemeral", {{"volumeClaimTemplate", json::object()}}}},
                        {{"name", "config"}, {"configMap", {{"name", "settings"}}}},
                        {{"name", "broken"}, {"persistentVolumeClaim", {{"claimName", 7}}}}}}}}};
  EXPECT_EQ(ReferencedClaims(pod), (std::set<std::string>{"data", "web-scratch"}));
  EXPECT_TRUE(ReferencedClaims(json{{"spec", json::object()}}).empty());
  EXPECT_TRUE(ReferencedClaims(json("not a pod")).empty());
}

TEST(SyncClaims, TheHostCopyKeepsTheRequestAndClassUnderTheSyncersBookkeeping) {
  const VirtualClusterView view = SampleView(gpu::Tier::kShared);
  const json copy = Copy(VirtualClaim("data"));
  EXPECT_EQ(copy["kind"], "PersistentVolumeClaim");
  EXPECT_EQ(copy["metadata"]["name"], HostObjectName("data", "team", view.vcluster));
  EXPECT_EQ(copy["metadata"]["namespace"], view.host_namespace);
  EXPECT_EQ(copy["metadata"]["labels"]["app"], "db");
  EXPECT_EQ(copy["metadata"]["labels"][std::string(kSyncedLabel)], "true");
  EXPECT_FALSE(copy["metadata"]["annotations"].contains("kubectl.kubernetes.io/last-applied-configuration"));
  EXPECT_EQ(copy["spec"], json({{"accessModes", {"ReadWriteOnce"}},
                                {"storageClassName", "fast"},
                                {"volumeMode", "Filesystem"},
                                {"resources", {{"requests", {{"storage", "10Gi"}}}}}}));
  auto ref = VirtualRefOf(copy, view.tenant, view.vcluster);
  ASSERT_TRUE(ref.has_value());
  EXPECT_EQ(*ref, (VirtualRef{"team", "data", "uid-data"}));
}

TEST(SyncClaims, AClaimSourcedFromAnotherClaimOfItsNamespaceIsCopiedFromThatClaimsCopy) {
  const VirtualClusterView view = SampleView(gpu::Tier::kShared);
  const json copy = Copy(VirtualClaim(
      "clone", {{"dataSource", {{"kind", "PersistentVolumeClaim"}, {"name", "data"}}},
                {"dataSourceRef", {{"kind", "PersistentVolumeClaim"}, {"apiGroup", ""}, {"name", "data"}}}}));
  const json source = {{"kind", "PersistentVolumeClaim"}, {"name", HostObjectName("data", "team", view.vcluster)}};
  EXPECT_EQ(copy["spec"]["dataSource"], source);
  EXPECT_EQ(copy["spec"]["dataSourceRef"], source);
}

TEST(SyncClaims, AClaimThatCouldBindAnotherTenantsVolumeOrNeedsAnUnsyncedSourceIsRefusedNamingTheField) {
  EXPECT_EQ(Refused(VirtualClaim("a", {{"volumeName", "pv-0042"}})).field, "spec.volumeName");
  EXPECT_EQ(Refused(VirtualClaim("b", {{"selector", {{"matchLabels", {{"tenant", "globex"}}}}}})).field,
            "spec.selector");
  EXPECT_EQ(
      Refused(VirtualClaim(
                  "c", {{"dataSource",
                         {{"apiGroup", "snapshot.storage.k8s.io"}, {"kind", "VolumeSnapshot"}, {"name", "nightly"}}}}))
          .field,
      "spec.dataSource");
  EXPECT_EQ(
      Refused(VirtualClaim("d", {{"dataSourceRef",
                                  {{"kind", "PersistentVolumeClaim"}, {"name", "data"}, {"namespace", "other"}}}}))
          .field,
      "spec.dataSourceRef.namespace");
  EXPECT_EQ(Refused(VirtualClaim("e", {{"dataSource", {{"kind", "PersistentVolumeClaim"}}}})).field, "spec.dataSource");
  // Empty values are no request at all.
  Copy(VirtualClaim("f", {{"volumeName", ""}, {"selector", json::object()}}));
}

TEST(SyncClaims, AClaimWithoutItsIdentityIsAnErrorNamingTheField) {
  json claim = VirtualClaim("data");
  claim["metadata"].erase("uid");
  auto result = HostClaim(SampleView(gpu::Tier::kShared), claim);
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.status().message().find("metadata.uid"), std::string::npos);
}

TEST(SyncClaims, ACopyIsUpToDateUntilItsRequestOrBookkeepingDiffersAndTheUpdateKeepsWhatTheHostFilledIn) {
  const json want = Copy(VirtualClaim("data"));
  json host = want;
  host["metadata"]["uid"] = "host-uid";
  host["metadata"]["resourceVersion"] = "99";
  host["spec"]["volumeName"] = "pvc-1234";
  host["status"] = {{"phase", "Bound"}};
  EXPECT_TRUE(ClaimUpToDate(want, host));

  json grown = Copy(VirtualClaim("data", {{"resources", {{"requests", {{"storage", "20Gi"}}}}}}));
  EXPECT_FALSE(ClaimUpToDate(grown, host));
  const json update = ClaimUpdate(grown, host);
  EXPECT_EQ(update["spec"]["resources"]["requests"]["storage"], "20Gi");
  EXPECT_EQ(update["spec"]["volumeName"], "pvc-1234");
  EXPECT_EQ(update["metadata"]["resourceVersion"], "99");
  EXPECT_EQ(update["metadata"]["uid"], "host-uid");
  EXPECT_TRUE(ClaimUpToDate(grown, update));

  json relabelled = VirtualClaim("data");
  relabelled["metadata"]["labels"] = {{"app", "cache"}};
  EXPECT_FALSE(ClaimUpToDate(Copy(relabelled), host));
  EXPECT_EQ(ClaimUpdate(Copy(relabelled), host)["metadata"]["labels"]["app"], "cache");
}

TEST(SyncClaims, TheHostsBindingIsCopiedUpOnceAndWhatTheVirtualStatusHadElseIsKept) {
  json host = Copy(VirtualClaim("data"));
  json virtual_claim = VirtualClaim("data");
  virtual_claim["status"] = {{"phase", "Pending"}};
  host["status"] = {{"phase", "Bound"},
                    {"accessModes", {"ReadWriteOnce"}},
                    {"capacity", {{"storage", "10Gi"}}},
                    {"conditions", json::array()}};
  auto status = ClaimStatusUp(virtual_claim, host);
  ASSERT_TRUE(status.has_value());
  EXPECT_EQ(*status,
            json({{"phase", "Bound"}, {"accessModes", {"ReadWriteOnce"}}, {"capacity", {{"storage", "10Gi"}}}}));
  virtual_claim["status"] = *status;
  EXPECT_FALSE(ClaimStatusUp(virtual_claim, host).has_value());

  host["status"]["phase"] = "Lost";
  host["status"].erase("capacity");
  status = ClaimStatusUp(virtual_claim, host);
  ASSERT_TRUE(status.has_value());
  EXPECT_EQ((*status)["phase"], "Lost");
  EXPECT_FALSE(status->contains("capacity"));
}

// As the kubelet: an ephemeral volume's claim "<pod>-<volume>" must be the
// pod's own; pod "a" with volume "b-c" and pod "a-b" with volume "c" name one.
TEST(HostClaims, AnEphemeralVolumesClaimMustBeThePodsOwn) {
  auto pod = [](const std::string& name, const std::string& uid, const std::string& volume) {
    return json{{"metadata", {{"name", name}, {"namespace", "team"}, {"uid", uid}}},
                {"spec",
                 {{"volumes",
                   {{{"name", "cache"}, {"emptyDir", json::object()}},
                    {{"name", volume}, {"ephemeral", {{"volumeClaimTemplate", json::object()}}}}}}}}};
  };
  const json owned_by_a = {
      {"metadata",
       {{"name", "a-b-c"},
        {"ownerReferences", {{{"kind", "Pod"}, {"name", "a"}, {"uid", "uid-a"}, {"controller", true}}}}}}};
  auto lookup = [&](const std::string& name) -> std::optional<json> {
    if (name == "a-b-c") return owned_by_a;
    return std::nullopt;
  };
  EXPECT_FALSE(EphemeralClaimOfAnother(pod("a", "uid-a", "b-c"), lookup)) << "its own";
  EXPECT_FALSE(EphemeralClaimOfAnother(pod("x", "uid-x", "y"), lookup)) << "none yet: the pod waits for it";
  auto refused = EphemeralClaimOfAnother(pod("a-b", "uid-ab", "c"), lookup);
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->field, "spec.volumes[1].ephemeral");
  EXPECT_NE(refused->message.find("a-b-c was not created for this pod but for Pod a"), std::string::npos)
      << refused->message;
  // One the tenant made by hand, without an owner: not the pod's either.
  auto by_hand = [](const std::string&) -> std::optional<json> { return json{{"metadata", {{"name", "a-b-c"}}}}; };
  EXPECT_TRUE(EphemeralClaimOfAnother(pod("a", "uid-a", "b-c"), by_hand));
}

}  // namespace
}  // namespace septa::tenancy::sync
