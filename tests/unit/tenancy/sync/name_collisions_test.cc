// Host names two virtual objects map to (name_collisions.h): who holds one,
// what the refusals say, which of a pod's references has it, and gangs.
#include "tenancy/sync/name_collisions.h"

#include <gtest/gtest.h>

#include "tenancy/sync/gangs.h"

namespace septa::tenancy::sync {
namespace {

using nlohmann::json;

// A host object as HostMetadata writes it, of `kind` from ns/name (uid).
json Copy(std::string_view kind, const std::string& ns, const std::string& name, const std::string& uid) {
  const json meta = {{"name", name}, {"namespace", ns}, {"uid", uid}};
  return {{"metadata", HostMetadata(kind, meta, "acme", "train", "septa-acme-x-train", {})}};
}

TEST(NameCollisions, VClusterNamesAreNotInjective) {
  EXPECT_EQ(HostObjectName("q-x-r", "s", "train"), HostObjectName("q", "r-x-s", "train"));
}

TEST(NameCollisions, TheHolderIsAnotherNamespaceOrNameOrKindNeverAnEarlierObjectOfTheSameName) {
  const json held = Copy("Pod", "r-x-s", "q", "uid-1");
  // Its own copy, of this object or an earlier one of its name (stale, replaced): no other holder.
  EXPECT_FALSE(OtherHolder(held, "Pod", "r-x-s", "q", "acme", "train"));
  const json earlier = Copy("Pod", "r-x-s", "q", "uid-0");
  EXPECT_FALSE(OtherHolder(earlier, "Pod", "r-x-s", "q", "acme", "train"));
  // Another namespace's, or another kind's (a token secret records its pod): held.
  auto holder = OtherHolder(held, "Pod", "s", "q-x-r", "acme", "train");
  ASSERT_TRUE(holder);
  EXPECT_EQ(*holder, (HostNameHolder{"Pod", {"r-x-s", "q", "uid-1"}}));
  EXPECT_TRUE(OtherHolder(Copy("Pod", "s", "q", "uid-2"), "Secret", "s", "q", "acme", "train"));
  // One that records nothing of this virtual cluster: no holder (left alone by the caller anyway).
  EXPECT_FALSE(OtherHolder(held, "Pod", "s", "q-x-r", "acme", "other"));
  EXPECT_FALSE(OtherHolder(json{{"metadata", {{"name", "x"}}}}, "Pod", "s", "q-x-r", "acme", "train"));
}

TEST(NameCollisions, RefusalsNameBothObjectsAndTheHostName) {
  const Refusal taken = HostNameTaken("Pod", "s", "q-x-r", "q-x-r-x-s-x-train", {"Pod", {"r-x-s", "q", "u"}});
  EXPECT_EQ(taken.field, "metadata.name");
  for (const char* part : {"q-x-r-x-s-x-train", "Pod r-x-s/q", "\"q-x-r\" in \"s\"", "\"q\" in \"r-x-s\""}) {
    EXPECT_NE(taken.message.find(part), std::string::npos) << part << " in " << taken.message;
  }
  const Refusal used = HostNameUsed("ConfigMap", "b-x-c", "cfg", "cfg-x-b-x-c-x-train", "c", "m", "cfg-x-b");
  EXPECT_NE(used.message.find("pod c/m"), std::string::npos) << used.message;
  const Refusal pod = ReferenceRefused("ConfigMap", "b-x-c", "cfg", used);
  EXPECT_EQ(pod.field, "spec");
  EXPECT_NE(pod.message.find("ConfigMap b-x-c/cfg"), std::string::npos) << pod.message;
  EXPECT_NE(pod.message.find(used.message), std::string::npos) << pod.message;
}

TEST(NameCollisions, TheReferenceOfAPodWithAHostName) {
  json pod = {{"metadata", {{"name", "m"}, {"namespace", "c"}}},
              {"spec",
               {{"volumes",
                 {{{"name", "a"}, {"configMap", {{"name", "cfg-x-b"}}}},
                  {{"name", "b"}, {"secret", {{"secretName", "cfg-x-b"}}}},
                  {{"name", "d"}, {"persistentVolumeClaim", {{"claimName", "data-x-b"}}}},
                  {{"name", "e"}, {"ephemeral", json::object()}}}},
                {"containers", {{{"name", "main"}}}}}}};
  EXPECT_EQ(ReferenceWithHostName(pod, "ConfigMap", "cfg-x-b-x-c-x-train", "train"), "cfg-x-b");
  EXPECT_EQ(ReferenceWithHostName(pod, "Secret", "cfg-x-b-x-c-x-train", "train"), "cfg-x-b");
  EXPECT_EQ(ReferenceWithHostName(pod, "PersistentVolumeClaim", "data-x-b-x-c-x-train", "train"), "data-x-b");
  EXPECT_EQ(ReferenceWithHostName(pod, "PersistentVolumeClaim", "m-e-x-c-x-train", "train"), "m-e");  // ephemeral
  EXPECT_EQ(ReferenceWithHostName(pod, "ConfigMap", "data-x-b-x-c-x-train", "train"), "");
  EXPECT_EQ(ReferenceWithHostName(pod, "ConfigMap", "cfg-x-b-x-c-x-other", "train"), "");
}

TEST(NameCollisions, AGangsHostNameHeldByAnotherNamespacesGang) {
  const std::string group = HostGangName("g-x-r", "s", "train");
  ASSERT_EQ(group, HostGangName("g", "r-x-s", "train"));
  json member = {
      {"metadata",
       {{"annotations", {{"pod-group-name", group}}}, {"labels", {{std::string(kVirtualNamespaceLabel), "r-x-s"}}}}}};
  EXPECT_EQ(OtherGangNamespace(member, group, "s"), "r-x-s");
  EXPECT_EQ(OtherGangNamespace(member, group, "r-x-s"), "");
  EXPECT_EQ(OtherGangNamespace(member, "another-group", "s"), "");
  json kueue = {
      {"metadata",
       {{"labels", {{"kueue.x-k8s.io/pod-group-name", group}, {std::string(kVirtualNamespaceLabel), "r-x-s"}}}}}};
  EXPECT_EQ(OtherGangNamespace(kueue, group, "s"), "r-x-s");
  const Refusal refused = GangNameTaken("s", Gang{"g-x-r", 2}, group, "r-x-s");
  EXPECT_EQ(refused.field, "metadata.annotations[septa.dev/gang]");
  EXPECT_NE(refused.message.find("r-x-s"), std::string::npos) << refused.message;
}

}  // namespace
}  // namespace septa::tenancy::sync
