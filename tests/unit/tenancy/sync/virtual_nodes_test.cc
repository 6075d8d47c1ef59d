// The nodes a virtual cluster shows: the nodes its pods are bound to, with
// what the tenant holds there as GPU capacity, per tier.
#include <gtest/gtest.h>

#include "tenancy/host/gpu_holdings.h"
#include "tenancy/sync/virtual_nodes.h"
#include "tests/unit/tenancy/sync/sample_views.h"

namespace septa::tenancy::sync {
namespace {

using nlohmann::json;

VirtualClusterView ViewOnMachines(gpu::Tier tier) {
  VirtualClusterView view = SampleView(tier);
  for (auto& node : view.nodes) {
    node.cpu_milli = 96'000;
    node.memory_mib = 1'048'576;
    node.labels["kubernetes.io/arch"] = "amd64";
    node.labels[host::kGpuProductLabel] = "NVIDIA-H100-80GB-HBM3";
    node.labels["septa.dev/pool"] = "training";             // the host's bookkeeping: not shown
    node.labels["nvidia.com/mig.config"] = "all-balanced";  // nor the host's GPU configuration
  }
  return view;
}

// The virtual node of `name` as the syncer writes it: the inventory's node, if the view has it.
json VirtualNode(const VirtualClusterView& view, const std::string& name) {
  for (const auto& node : view.nodes) {
    if (node.name == name) return sync::VirtualNode(view.reservation, name, &node);
  }
  return sync::VirtualNode(view.reservation, name, nullptr);
}

json Capacity(const json& node) { return node["status"].value("capacity", json::object()); }
json Ready(const json& node) { return node["status"]["conditions"][0]; }

TEST(SyncVirtualNodes, DedicatedShowsTheWholeGpusReservedOnThatNode) {
  const VirtualClusterView view = ViewOnMachines(gpu::Tier::kDedicated);  // GPUs 2, 3 of h100-0; 5 of h100-1
  const json node = VirtualNode(view, "h100-0");
  EXPECT_EQ(node["metadata"]["name"], "h100-0");
  EXPECT_EQ(Capacity(node), (json{{"cpu", "96"}, {"memory", "1Ti"}, {"nvidia.com/gpu", "2"}}));
  EXPECT_EQ(node["status"]["allocatable"], Capacity(node));
  EXPECT_EQ(Capacity(VirtualNode(view, "h100-1"))["nvidia.com/gpu"], "1");
}

TEST(SyncVirtualNodes, IsolatedShowsItsMigInstancesByProfileAndNoWholeGpu) {
  const VirtualClusterView view = ViewOnMachines(gpu::Tier::kIsolated);  // h100-0: 3g.40gb, 1g.10gb; h100-1: 3g.40gb
  const json on0 = Capacity(VirtualNode(view, "h100-0"));
  EXPECT_EQ(on0["nvidia.com/mig-3g.40gb"], "1");
  EXPECT_EQ(on0["nvidia.com/mig-1g.10gb"], "1");
  EXPECT_FALSE(on0.contains("nvidia.com/gpu"));
  const json on1 = Capacity(VirtualNode(view, "h100-1"));
  EXPECT_EQ(on1["nvidia.com/mig-3g.40gb"], "1");
  EXPECT_FALSE(on1.contains("nvidia.com/mig-1g.10gb"));
}

TEST(SyncVirtualNodes, SharedShowsTheGpusItHasAShareOfAndItsBudgetInThousandths) {
  const VirtualClusterView view = ViewOnMachines(gpu::Tier::kShared);  // 500 of GPU 0, 250 of GPU 1 on h100-0
  const json node = VirtualNode(view, "h100-0");
  EXPECT_EQ(Capacity(node)["nvidia.com/gpu"], "2");
  EXPECT_EQ(node["metadata"]["annotations"][std::string(kGpuMilliAnnotation)], "750");
}

TEST(SyncVirtualNodes, ExclusiveShowsEveryGpuOfItsNode) {
  const VirtualClusterView view = ViewOnMachines(gpu::Tier::kExclusive);  // h100-1, 8 GPUs
  EXPECT_EQ(Capacity(VirtualNode(view, "h100-1"))["nvidia.com/gpu"], "8");
}

TEST(SyncVirtualNodes, ShowsTheMachineNotTheHostsBookkeeping) {
  const json labels = VirtualNode(ViewOnMachines(gpu::Tier::kDedicated), "h100-0")["metadata"]["labels"];
  EXPECT_EQ(labels, (json{{"kubernetes.io/hostname", "h100-0"},
                          {"kubernetes.io/arch", "amd64"},
                          {std::string(host::kGpuProductLabel), "NVIDIA-H100-80GB-HBM3"},
                          {std::string(kVirtualNodeLabel), "true"}}));
}

TEST(SyncVirtualNodes, ReadyIsTheHostNodesHealth) {
  VirtualClusterView view = ViewOnMachines(gpu::Tier::kDedicated);
  EXPECT_EQ(Ready(VirtualNode(view, "h100-0"))["status"], "True");
  view.nodes[0].health = gpu::NodeHealth::kNotReady;
  EXPECT_EQ(Ready(VirtualNode(view, "h100-0"))["status"], "False");
  EXPECT_EQ(Ready(VirtualNode(view, "h100-0"))["reason"], "HostNodeNotReady");
  view.nodes[0].health = gpu::NodeHealth::kGone;
  EXPECT_EQ(Ready(VirtualNode(view, "h100-0"))["status"], "Unknown");
}

// A CPU pod's node, which the reservation holds nothing on: the machine
// without GPUs; a node the inventory does not know: its name alone.
TEST(SyncVirtualNodes, ANodeOutsideTheReservationShowsNoGpu) {
  const VirtualClusterView view = ViewOnMachines(gpu::Tier::kExclusive);  // holds h100-1 only
  const json node = VirtualNode(view, "h100-0");
  EXPECT_EQ(Capacity(node), (json{{"cpu", "96"}, {"memory", "1Ti"}}));
  EXPECT_EQ(Ready(node)["status"], "True");
  const json unknown = VirtualNode(view, "cpu-7");
  EXPECT_FALSE(unknown["status"].contains("capacity"));
  EXPECT_EQ(Ready(unknown)["status"], "Unknown");
  EXPECT_EQ(Ready(unknown)["reason"], "HostNodeUnknown");
  EXPECT_EQ(unknown["metadata"]["labels"],
            (json{{"kubernetes.io/hostname", "cpu-7"}, {std::string(kVirtualNodeLabel), "true"}}));
}

// Bound by a binding (PodScheduled=True, as the API server adds it), not
// named by the tenant: a pod created with a node name shows no host
// machine's labels and size (and is refused by the translation).
TEST(SyncVirtualNodes, TheNodesInUseAreThoseThePodsAreBoundTo) {
  auto bound = [](const std::string& name, const std::string& node) {
    json pod = SamplePod(name);
    pod["spec"]["nodeName"] = node;
    pod["status"]["conditions"] = json::array({{{"type", "PodScheduled"}, {"status", "True"}}});
    return pod;
  };
  json d = bound("d", "");
  json named = SamplePod("named");
  named["spec"]["nodeName"] = "h100-2";
  json unschedulable = bound("u", "h100-3");
  unschedulable["status"]["conditions"][0]["status"] = "False";
  EXPECT_EQ(NodesInUse({bound("a", "h100-1"), bound("b", "h100-0"), bound("c", "h100-1"), d, named, unschedulable,
                        SamplePod("pending"), json::object()}),
            (std::set<std::string>{"h100-0", "h100-1"}));
  EXPECT_TRUE(BoundToNode(bound("a", "h100-1")));
  EXPECT_FALSE(BoundToNode(named));
}

TEST(SyncVirtualNodes, UpToDateComparesWhatIsShownNotWhatTheServerAdds) {
  const json desired = VirtualNode(ViewOnMachines(gpu::Tier::kShared), "h100-0");
  json read_back = desired;
  read_back["metadata"]["uid"] = "u-1";
  read_back["metadata"]["resourceVersion"] = "17";
  read_back["metadata"]["creationTimestamp"] = "2026-11-24T00:00:00Z";
  EXPECT_TRUE(VirtualNodeUpToDate(read_back, desired));
  json changed = read_back;
  changed["status"]["capacity"]["nvidia.com/gpu"] = "1";
  EXPECT_FALSE(VirtualNodeUpToDate(changed, desired));
  changed = read_back;
  changed["metadata"]["labels"]["extra"] = "x";
  EXPECT_FALSE(VirtualNodeUpToDate(changed, desired));
  changed = read_back;
  changed["metadata"].erase("annotations");
  EXPECT_FALSE(VirtualNodeUpToDate(changed, desired));
  changed = read_back;
  changed["spec"]["unschedulable"] = true;
  EXPECT_FALSE(VirtualNodeUpToDate(changed, desired));
}

}  // namespace
}  // namespace septa::tenancy::sync
