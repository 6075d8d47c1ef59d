// The pod index the simulated scheduler, kubelet and exits read: each pod
// in the sets its state puts it in, and what bound pods request counted once
// per pod, through binds, finishes, deletions and a new pod of the same name.
#include "services/kubesim/pod_index.h"

#include <gtest/gtest.h>

namespace septa::kubesim {
namespace {

using nlohmann::json;

json Pod(const std::string& name, const std::string& uid, const std::string& node, const std::string& phase,
         json annotations = json::object()) {
  return {
      {"metadata", {{"namespace", "ns"}, {"name", name}, {"uid", uid}, {"annotations", annotations}}},
      {"spec",
       {{"nodeName", node},
        {"containers",
         {{{"name", "c"}, {"resources", {{"requests", {{"cpu", "500m"}}}, {"limits", {{"nvidia.com/gpu", "1"}}}}}}}}}},
      {"status", {{"phase", phase}}}};
}

WatchEvent Event(WatchEvent::Type type, json pod) {
  return {type, 0, std::make_shared<const json>(std::move(pod)), nullptr};
}

std::vector<std::string> Names(const std::vector<ObjectPtr>& pods) {
  std::vector<std::string> out;
  for (const auto& p : pods) out.push_back((*p)["metadata"]["name"]);
  return out;
}

TEST(kubesimPodIndex, EachPodIsWhereItsStatePutsIt) {
  PodIndex index;
  index.Deliver(Event(WatchEvent::Type::kAdded, Pod("a", "1", "", "Pending")));
  index.Deliver(Event(WatchEvent::Type::kAdded, Pod("b", "2", "n1", "Pending")));
  index.Deliver(
      Event(WatchEvent::Type::kAdded, Pod("c", "3", "n1", "Running", {{"kubesim.septa.dev/exit-code", "1"}})));
  index.Deliver(Event(WatchEvent::Type::kAdded, Pod("d", "4", "n1", "Running")));
  json deleting = Pod("e", "5", "", "Pending");
  deleting["metadata"]["deletionTimestamp"] = "2026-11-24T00:00:00Z";
  index.Deliver(Event(WatchEvent::Type::kAdded, deleting));
  EXPECT_EQ(Names(index.Unscheduled()), std::vector<std::string>{"a"}) << "a deleting pod is not scheduled";
  EXPECT_EQ(Names(index.Starting()), std::vector<std::string>{"b"});
  EXPECT_EQ(Names(index.Exiting()), std::vector<std::string>{"c"});

  index.Deliver(Event(WatchEvent::Type::kModified, Pod("a", "1", "n2", "Pending")));
  EXPECT_TRUE(index.Unscheduled().empty());
  EXPECT_EQ(Names(index.Starting()), (std::vector<std::string>{"a", "b"}));
  index.Deliver(Event(WatchEvent::Type::kDeleted, Pod("c", "3", "n1", "Running")));
  EXPECT_TRUE(index.Exiting().empty());
}

TEST(kubesimPodIndex, BoundPodsCountOnceUntilTheyFinishOrGo) {
  PodIndex index;
  auto used = [&](const std::string& node, const std::string& resource) {
    const PodIndex::Usage usage = index.Used();
    auto n = usage.find(node);
    if (n == usage.end()) return 0LL;
    auto r = n->second.find(resource);
    return r == n->second.end() ? 0LL : r->second;
  };
  index.Deliver(Event(WatchEvent::Type::kAdded, Pod("a", "1", "", "Pending")));
  EXPECT_TRUE(index.Used().empty()) << "an unscheduled pod uses no node";
  index.Deliver(Event(WatchEvent::Type::kModified, Pod("a", "1", "n1", "Pending")));
  index.Deliver(Event(WatchEvent::Type::kModified, Pod("a", "1", "n1", "Running")));
  index.Deliver(Event(WatchEvent::Type::kAdded, Pod("b", "2", "n1", "Running")));
  EXPECT_EQ(used("n1", "cpu"), 1000) << "each pod once, however many events";
  EXPECT_EQ(used("n1", "nvidia.com/gpu"), 2000) << "limits stand in for requests";
  EXPECT_EQ(used("n1", "pods"), 2000);

  index.Deliver(Event(WatchEvent::Type::kModified, Pod("a", "1", "n1", "Succeeded")));
  EXPECT_EQ(used("n1", "cpu"), 500) << "a finished pod frees what it held";
  // A new pod of b's name (another uid) on another node: the old one's use goes.
  index.Deliver(Event(WatchEvent::Type::kModified, Pod("b", "3", "n2", "Running")));
  EXPECT_EQ(used("n1", "pods"), 0);
  EXPECT_EQ(used("n2", "cpu"), 500);
  index.Deliver(Event(WatchEvent::Type::kDeleted, Pod("b", "3", "n2", "Running")));
  EXPECT_TRUE(index.Used().empty());
}

}  // namespace
}  // namespace septa::kubesim
