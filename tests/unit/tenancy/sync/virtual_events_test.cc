// Events of synced pods, copied up to their virtual pods with no host name
// left in them.
#include <gtest/gtest.h>

#include "tenancy/sync/virtual_events.h"

namespace septa::tenancy::sync {
namespace {

using nlohmann::json;

constexpr const char* kHostNamespace = "septa-acme-train";
constexpr const char* kHostPod = "web-x-default-x-train";
const VirtualRef kPod{"default", "web", "virtual-uid-1"};

// As kube-scheduler records one: named "<pod>.<hex>".
json HostEvent() {
  return {{"apiVersion", "v1"},
          {"kind", "Event"},
          {"metadata",
           {{"name", std::string(kHostPod) + ".17a2b3c4d5e6f708"},
            {"namespace", kHostNamespace},
            {"uid", "host-event-uid"},
            {"resourceVersion", "42"}}},
          {"involvedObject",
           {{"kind", "Pod"},
            {"apiVersion", "v1"},
            {"namespace", kHostNamespace},
            {"name", kHostPod},
            {"uid", "host-pod-uid"},
            {"fieldPath", "spec.containers{main}"}}},
          {"type", "Normal"},
          {"reason", "Scheduled"},
          {"message", std::string("Successfully assigned ") + kHostNamespace + "/" + kHostPod + " to gpu-node-3"},
          {"count", 3},
          {"firstTimestamp", "2026-11-24T07:00:00Z"},
          {"lastTimestamp", "2026-11-24T07:05:00Z"},
          {"source", {{"component", "default-scheduler"}}},
          {"reportingComponent", "default-scheduler"}};
}

TEST(VirtualEvent, IsAboutTheVirtualPodUnderItsVirtualNames) {
  auto event = VirtualEvent(HostEvent(), kHostNamespace, kHostPod, kPod);
  ASSERT_TRUE(event.has_value());
  EXPECT_EQ((*event)["metadata"]["name"], "web.17a2b3c4d5e6f708") << "the recorder's suffix is kept";
  EXPECT_EQ((*event)["metadata"]["namespace"], "default");
  EXPECT_EQ((*event)["metadata"]["annotations"][std::string(kHostEventUidAnnotation)], "host-event-uid");
  EXPECT_FALSE((*event)["metadata"].contains("resourceVersion")) << "the host's versions mean nothing there";
  EXPECT_FALSE((*event)["metadata"].contains("uid"));
  const json& involved = (*event)["involvedObject"];
  EXPECT_EQ(involved["kind"], "Pod");
  EXPECT_EQ(involved["namespace"], "default");
  EXPECT_EQ(involved["name"], "web");
  EXPECT_EQ(involved["uid"], "virtual-uid-1");
  EXPECT_EQ(involved["fieldPath"], "spec.containers{main}");
  EXPECT_EQ((*event)["message"], "Successfully assigned default/web to gpu-node-3");
  EXPECT_EQ((*event)["reason"], "Scheduled");
  EXPECT_EQ((*event)["type"], "Normal");
  EXPECT_EQ((*event)["count"], 3);
  EXPECT_EQ((*event)["firstTimestamp"], "2026-11-24T07:00:00Z");
  EXPECT_EQ((*event)["lastTimestamp"], "2026-11-24T07:05:00Z");
  EXPECT_EQ((*event)["source"]["component"], "default-scheduler");
  EXPECT_EQ((*event)["reportingComponent"], "default-scheduler");
  EXPECT_EQ(event->dump().find(kHostNamespace), std::string::npos) << event->dump();
  EXPECT_EQ(event->dump().find(kHostPod), std::string::npos) << event->dump();
}

TEST(VirtualEvent, AHostPodNameAloneInTheMessageIsReplacedToo) {
  json host = HostEvent();
  host["reason"] = "Killing";
  host["message"] = std::string("Stopping container main of ") + kHostPod;
  auto event = VirtualEvent(host, kHostNamespace, kHostPod, kPod);
  ASSERT_TRUE(event.has_value());
  EXPECT_EQ((*event)["message"], "Stopping container main of web");
}

TEST(VirtualEvent, ANameOfAnotherFormGetsAStableSuffix) {
  json host = HostEvent();
  host["metadata"]["name"] = "kai-scheduler-event-9f8e";
  auto first = VirtualEvent(host, kHostNamespace, kHostPod, kPod);
  auto again = VirtualEvent(host, kHostNamespace, kHostPod, kPod);
  ASSERT_TRUE(first.has_value() && again.has_value());
  const std::string name = (*first)["metadata"]["name"];
  EXPECT_EQ(name, (*again)["metadata"]["name"]);
  EXPECT_TRUE(name.starts_with("web.")) << name;
  EXPECT_EQ(name.size(), std::string("web.").size() + 16) << name;
}

TEST(VirtualEvent, ALongPodNameStaysAValidObjectName) {
  const std::string long_name(250, 'p');
  auto event = VirtualEvent(HostEvent(), kHostNamespace, kHostPod, {"default", long_name, "u"});
  ASSERT_TRUE(event.has_value());
  const std::string name = (*event)["metadata"]["name"];
  EXPECT_LE(name.size(), 253u);
  EXPECT_TRUE(name.ends_with(".17a2b3c4d5e6f708")) << name;
}

TEST(VirtualEvent, AnEventAboutAnythingElseIsNotCopied) {
  json other_pod = HostEvent();
  other_pod["involvedObject"]["name"] = "db-x-default-x-train";
  EXPECT_FALSE(VirtualEvent(other_pod, kHostNamespace, kHostPod, kPod).has_value());
  json other_namespace = HostEvent();
  other_namespace["involvedObject"]["namespace"] = "kube-system";
  EXPECT_FALSE(VirtualEvent(other_namespace, kHostNamespace, kHostPod, kPod).has_value());
  json a_node = HostEvent();
  a_node["involvedObject"]["kind"] = "Node";
  EXPECT_FALSE(VirtualEvent(a_node, kHostNamespace, kHostPod, kPod).has_value());
  json no_uid = HostEvent();
  no_uid["metadata"].erase("uid");
  EXPECT_FALSE(VirtualEvent(no_uid, kHostNamespace, kHostPod, kPod).has_value());
  EXPECT_FALSE(VirtualEvent(json::array(), kHostNamespace, kHostPod, kPod).has_value());
}

TEST(VirtualEventUpToDate, ARepeatedEventIsAChangeAndTheServersMetadataIsNot) {
  const json desired = *VirtualEvent(HostEvent(), kHostNamespace, kHostPod, kPod);
  json read_back = desired;
  read_back["metadata"]["resourceVersion"] = "7";
  read_back["metadata"]["uid"] = "virtual-event-uid";
  read_back["metadata"]["creationTimestamp"] = "2026-11-24T07:00:01Z";
  EXPECT_TRUE(VirtualEventUpToDate(read_back, desired));

  json repeated = HostEvent();
  repeated["count"] = 4;
  repeated["lastTimestamp"] = "2026-11-24T07:06:00Z";
  EXPECT_FALSE(VirtualEventUpToDate(read_back, *VirtualEvent(repeated, kHostNamespace, kHostPod, kPod)));
  json someone_elses = read_back;
  someone_elses["metadata"]["annotations"].erase(std::string(kHostEventUidAnnotation));
  EXPECT_FALSE(VirtualEventUpToDate(someone_elses, desired));
}

}  // namespace
}  // namespace septa::tenancy::sync
