// ObserveNode over the shapes GPU feature discovery gives nodes, over bad
// objects, and over kubesim's own nodes (annotation and labels must agree).
#include "services/reconcile/node_observation.h"

#include <gtest/gtest.h>

#include "gpu/gpu_uuid.h"
#include "services/kube/client.h"
#include "services/kube/gpu_labels.h"
#include "services/kube/resources.h"
#include "services/kubesim/kubesim.h"
#include "services/kubesim/nodesim.h"

namespace septa::reconcile {
namespace {

using nlohmann::json;

constexpr const char* kCustomConfigs = R"(
version: v1
mig-configs:
  half-and-half:
    - devices: [0, 1, 2, 3]
      mig-enabled: false
    - devices: [4, 5, 6, 7]
      mig-enabled: true
      mig-devices: {"3g.40gb": 2}
)";

gpu::MigPartedConfig Configs() {
  gpu::MigPartedConfig configs = gpu::StockMigPartedConfigs(gpu::Catalog::Default());
  auto custom = gpu::ParseMigParted(kCustomConfigs, "test");
  if (!custom.ok()) ADD_FAILURE() << custom.status().ToString();
  else configs.configs.merge(custom->configs);
  return configs;
}

// A Ready node as the kubelet, GFD and the device plugin describe it.
json Node(const std::string& name, json labels, json allocatable) {
  labels["kubernetes.io/hostname"] = name;
  allocatable["cpu"] = "96";
  allocatable["memory"] = "1Ti";
  allocatable["pods"] = "110";
  return {
      {"apiVersion", "v1"},
      {"kind", "Node"},
      {"metadata", {{"name", name}, {"labels", labels}}},
      {"spec", json::object()},
      {"status",
       {{"capacity", allocatable},
        {"allocatable", allocatable},
        {"conditions", {{{"type", "MemoryPressure"}, {"status", "False"}}, {{"type", "Ready"}, {"status", "True"}}}}}}};
}

json H100Labels(const std::string& config, const std::string& state) {
  return {{"nvidia.com/gpu.product", "NVIDIA-H100-80GB-HBM3"},
          {"nvidia.com/gpu.count", "8"},
          {"nvidia.com/gpu.memory", "81559"},
          {"nvidia.com/mig.capable", "true"},
          {"nvidia.com/mig.strategy", "mixed"},
          {"nvidia.com/mig.config", config},
          {"nvidia.com/mig.config.state", state}};
}

json BalancedAllocatable() {
  return {{"nvidia.com/gpu", "0"},
          {"nvidia.com/mig-1g.10gb", "16"},
          {"nvidia.com/mig-2g.20gb", "8"},
          {"nvidia.com/mig-3g.40gb", "8"}};
}

class NodeObservationTest : public ::testing::Test {
 protected:
  Result<NodeObservation> Observe(const json& node) { return ObserveNode(node, catalog_, configs_); }

  NodeObservation Ok(const json& node) {
    auto observed = Observe(node);
    EXPECT_TRUE(observed.ok()) << observed.status().ToString();
    return observed.ok() ? *observed : NodeObservation{};
  }

  // The error's message, which must name `field`.
  void ExpectFieldError(const json& node, const std::string& field) {
    auto observed = Observe(node);
    ASSERT_FALSE(observed.ok()) << "accepted: " << node.dump();
    EXPECT_EQ(observed.status().code(), Code::kInvalidArgument);
    EXPECT_EQ(observed.status().message().rfind(field + ": ", 0), 0u) << observed.status().message();
  }

  std::string Layout(const gpu::InventoryGpu& g) { return gpu::LayoutToString(*catalog_.Find(g.model), g.mig_layout); }

  const gpu::Catalog& catalog_ = gpu::Catalog::Default();
  gpu::MigPartedConfig configs_ = Configs();
};

TEST_F(NodeObservationTest, WholeGpus) {
  json labels = {{"nvidia.com/gpu.product", "NVIDIA-A100-SXM4-80GB"},
                 {"nvidia.com/gpu.count", "8"},
                 {"nvidia.com/mig.capable", "true"},
                 {"nvidia.com/mig.config", "all-disabled"},
                 {"nvidia.com/mig.config.state", "success"},
                 {"topology.kubernetes.io/zone", "z1"}};
  NodeObservation o = Ok(Node("a100-0", labels, {{"nvidia.com/gpu", "8"}}));
  EXPECT_EQ(o.node.name, "a100-0");
  EXPECT_EQ(o.node.cpu_milli, 96000);
  EXPECT_EQ(o.node.memory_mib, 1024 * 1024);
  EXPECT_EQ(o.node.labels.at("topology.kubernetes.io/zone"), "z1");
  EXPECT_EQ(o.node.health, gpu::NodeHealth::kReady);
  EXPECT_EQ(o.node.mig_config, "all-disabled");
  EXPECT_EQ(o.node.mig_config_state, "success");
  EXPECT_TRUE(o.layout_settled);
  EXPECT_TRUE(o.issues.empty());
  ASSERT_EQ(o.node.gpus.size(), 8u);
  for (int i = 0; i < 8; ++i) {
    EXPECT_EQ(o.node.gpus[i].model, "A100-80GB");
    EXPECT_EQ(o.node.gpus[i].index, i);
    EXPECT_EQ(o.node.gpus[i].uuid, gpu::SyntheticGpuUuid("a100-0", i));
    EXPECT_FALSE(o.node.gpus[i].mig_enabled);
  }
}

TEST_F(NodeObservationTest, MigMixedWithTheIdentityAnnotation) {
  json node = Node("h100-0", H100Labels("all-balanced", "success"),
                   {{"nvidia.com/gpu", "1"}, {"nvidia.com/mig-3g.40gb", "1"}, {"nvidia.com/mig-1g.10gb", "3"}});
  node["metadata"]["labels"]["nvidia.com/gpu.count"] = "2";
  json gpus = {{{"index", 1},
                {"uuid", "GPU-11111111-2222-3333-4444-555555555555"},
                {"migEnabled", true},
                {"migDevices",
                 {{{"profile", "3g.40gb"}, {"start", 4}, {"giId", 2}},
                  {{"profile", "1g.10gb"}, {"start", 0}, {"giId", 7}},
                  {{"profile", "1g.10gb"}, {"start", 1}, {"giId", 8}},
                  {{"profile", "1g.10gb"}, {"start", 3}, {"giId", 10}}}}},
               {{"index", 0},
                {"uuid", "GPU-00000000-2222-3333-4444-555555555555"},
                {"migEnabled", false},
                {"migDevices", json::array()}}};
  node["metadata"]["annotations"] = {{kube::kGpuIdentityAnnotation, gpus.dump()}};
  NodeObservation o = Ok(node);
  EXPECT_TRUE(o.layout_settled);
  EXPECT_TRUE(o.issues.empty()) << o.issues[0].message;
  ASSERT_EQ(o.node.gpus.size(), 2u);
  EXPECT_EQ(o.node.gpus[0].uuid, "GPU-00000000-2222-3333-4444-555555555555");
  EXPECT_FALSE(o.node.gpus[0].mig_enabled);
  EXPECT_EQ(o.node.gpus[1].index, 1);
  EXPECT_EQ(o.node.gpus[1].uuid, "GPU-11111111-2222-3333-4444-555555555555");
  EXPECT_TRUE(o.node.gpus[1].mig_enabled);
  EXPECT_EQ(Layout(o.node.gpus[1]), "3g.40gb@4 1g.10gb@0 1g.10gb@1 1g.10gb@3")
      << "the devices as they are, not the all-balanced the label names";
  EXPECT_EQ(o.node.gpus[1].mig_gi_ids, (std::map<int, int>{{0, 7}, {1, 8}, {3, 10}, {4, 2}}));
  EXPECT_TRUE(o.node.gpus[0].mig_gi_ids.empty());

  // The annotation says what the devices have even while a change is pending.
  node["metadata"]["labels"]["nvidia.com/mig.config.state"] = "pending";
  o = Ok(node);
  EXPECT_TRUE(o.layout_settled);
  EXPECT_EQ(o.node.mig_config_state, "pending");
  EXPECT_EQ(Layout(o.node.gpus[1]), "3g.40gb@4 1g.10gb@0 1g.10gb@1 1g.10gb@3");

  // The annotation wins even while allocatable lags behind it; the lag is reported.
  node["status"]["allocatable"]["nvidia.com/mig-1g.10gb"] = "2";
  o = Ok(node);
  EXPECT_TRUE(o.layout_settled);
  ASSERT_EQ(o.issues.size(), 1u);
  EXPECT_EQ(o.issues[0].reason, "AllocatableDisagrees");
  EXPECT_NE(o.issues[0].message.find("nvidia.com/mig-1g.10gb=2"), std::string::npos) << o.issues[0].message;
}

TEST_F(NodeObservationTest, MigWithoutTheAnnotationFollowsTheMigPartedLayout) {
  NodeObservation o = Ok(Node("h100-1", H100Labels("all-balanced", "success"), BalancedAllocatable()));
  EXPECT_TRUE(o.layout_settled);
  EXPECT_TRUE(o.issues.empty());
  ASSERT_EQ(o.node.gpus.size(), 8u);
  for (const auto& g : o.node.gpus) {
    EXPECT_TRUE(g.mig_enabled);
    EXPECT_EQ(Layout(g), "3g.40gb@4 2g.20gb@2 1g.10gb@0 1g.10gb@1");
    EXPECT_EQ(g.uuid, gpu::SyntheticGpuUuid("h100-1", g.index));
    EXPECT_TRUE(g.mig_gi_ids.empty()) << "labels do not tell the driver's GPU-instance ids";
  }

  // A configured (non-stock) layout: some GPUs whole, some partitioned.
  o = Ok(Node("h100-2", H100Labels("half-and-half", "success"),
              {{"nvidia.com/gpu", "4"}, {"nvidia.com/mig-3g.40gb", "8"}}));
  EXPECT_TRUE(o.layout_settled);
  EXPECT_FALSE(o.node.gpus[3].mig_enabled);
  EXPECT_TRUE(o.node.gpus[4].mig_enabled);
  EXPECT_EQ(Layout(o.node.gpus[7]), "3g.40gb@0 3g.40gb@4");
}

TEST_F(NodeObservationTest, WhileTheLayoutChangesTheGpusLayoutIsNotTold) {
  // pending: the label names the layout wanted; allocatable still has the old one.
  NodeObservation o = Ok(Node("h100-0", H100Labels("all-1g.10gb", "pending"), BalancedAllocatable()));
  EXPECT_FALSE(o.layout_settled);
  EXPECT_EQ(o.node.mig_config, "all-1g.10gb");
  EXPECT_EQ(o.node.mig_config_state, "pending");
  ASSERT_EQ(o.issues.size(), 1u);
  EXPECT_EQ(o.issues[0].reason, "MigReconfiguring");
  ASSERT_EQ(o.node.gpus.size(), 8u) << "the GPUs themselves are known";
  EXPECT_EQ(o.node.gpus[2].uuid, gpu::SyntheticGpuUuid("h100-0", 2));
  EXPECT_FALSE(o.node.gpus[2].mig_enabled);
  EXPECT_TRUE(o.node.gpus[2].mig_layout.empty());

  o = Ok(Node("h100-0", H100Labels("all-1g.10gb", "failed"), BalancedAllocatable()));
  EXPECT_FALSE(o.layout_settled);
  EXPECT_EQ(o.issues[0].reason, "MigReconfigurationFailed");

  // success, but the device plugin has not caught up: allocatable disagrees.
  o = Ok(Node("h100-0", H100Labels("all-1g.10gb", "success"), BalancedAllocatable()));
  EXPECT_FALSE(o.layout_settled);
  ASSERT_EQ(o.issues.size(), 1u);
  EXPECT_EQ(o.issues[0].reason, "AllocatableDisagrees");
  EXPECT_NE(o.issues[0].message.find("nvidia.com/mig-1g.10gb=56"), std::string::npos) << o.issues[0].message;
  EXPECT_TRUE(o.node.gpus[0].mig_layout.empty());

  o = Ok(Node("h100-0", H100Labels("no-such-layout", "success"), BalancedAllocatable()));
  EXPECT_FALSE(o.layout_settled);
  EXPECT_EQ(o.issues[0].reason, "UnknownMigConfig");
  EXPECT_NE(o.issues[0].message.find("no-such-layout"), std::string::npos);

  json unlabelled = Node("h100-0", H100Labels("x", "success"), BalancedAllocatable());
  unlabelled["metadata"]["labels"].erase("nvidia.com/mig.config");
  o = Ok(unlabelled);
  EXPECT_FALSE(o.layout_settled);
  EXPECT_EQ(o.issues[0].reason, "MigLayoutUnknown");
}

TEST_F(NodeObservationTest, T4IsNotMigCapable) {
  json labels = {
      {"nvidia.com/gpu.product", "Tesla-T4"}, {"nvidia.com/gpu.count", "4"}, {"nvidia.com/mig.capable", "false"}};
  NodeObservation o = Ok(Node("t4-0", labels, {{"nvidia.com/gpu", "4"}}));
  EXPECT_TRUE(o.layout_settled);
  EXPECT_TRUE(o.issues.empty());
  ASSERT_EQ(o.node.gpus.size(), 4u);
  EXPECT_EQ(o.node.gpus[0].model, "T4");
  EXPECT_FALSE(o.node.gpus[3].mig_enabled);
  EXPECT_TRUE(o.node.mig_config.empty());

  // Time-slicing advertises replicas, not GPUs: not a disagreement.
  labels["nvidia.com/gpu.sharing-strategy"] = "time-slicing";
  o = Ok(Node("t4-0", labels, {{"nvidia.com/gpu", "16"}}));
  EXPECT_TRUE(o.issues.empty());
  // Without it, fewer advertised GPUs than labelled (one unhealthy) is reported.
  labels.erase("nvidia.com/gpu.sharing-strategy");
  o = Ok(Node("t4-0", labels, {{"nvidia.com/gpu", "3"}}));
  ASSERT_EQ(o.issues.size(), 1u);
  EXPECT_EQ(o.issues[0].reason, "AllocatableDisagrees");
  EXPECT_EQ(o.node.gpus.size(), 4u);
}

TEST_F(NodeObservationTest, CpuOnlyNode) {
  json node = Node("cpu-0", json::object(), json::object());
  node["status"]["allocatable"]["cpu"] = "7500m";
  node["status"]["allocatable"]["memory"] = "32Gi";
  NodeObservation o = Ok(node);
  EXPECT_EQ(o.node.cpu_milli, 7500);
  EXPECT_EQ(o.node.memory_mib, 32768);
  EXPECT_TRUE(o.node.gpus.empty());
  EXPECT_TRUE(o.issues.empty());

  node["status"]["allocatable"]["nvidia.com/gpu"] = "2";
  o = Ok(node);
  EXPECT_TRUE(o.node.gpus.empty());
  ASSERT_EQ(o.issues.size(), 1u);
  EXPECT_EQ(o.issues[0].reason, "GpuLabelsMissing");
}

TEST_F(NodeObservationTest, HealthIsTheReadyCondition) {
  json node = Node("n", json::object(), json::object());
  node["status"]["conditions"][1]["status"] = "False";
  EXPECT_EQ(Ok(node).node.health, gpu::NodeHealth::kNotReady);
  node["status"]["conditions"][1]["status"] = "Unknown";
  EXPECT_EQ(Ok(node).node.health, gpu::NodeHealth::kNotReady);
  node["status"].erase("conditions");
  EXPECT_EQ(Ok(node).node.health, gpu::NodeHealth::kNotReady) << "a kubelet that never reported";
}

TEST_F(NodeObservationTest, TaintsAndCordons) {
  json node = Node("n", json::object(), json::object());
  node["spec"]["taints"] = {{{"key", "dedicated"}, {"value", "gpu"}, {"effect", "NoSchedule"}},
                            {{"key", "node.kubernetes.io/not-ready"}, {"effect", "NoExecute"}}};
  NodeObservation o = Ok(node);
  EXPECT_EQ(o.node.taints, (std::vector<gpu::Taint>{{"dedicated", "gpu", "NoSchedule"},
                                                    {"node.kubernetes.io/not-ready", "", "NoExecute"}}));

  node["spec"]["unschedulable"] = true;
  o = Ok(node);
  EXPECT_EQ(o.node.health, gpu::NodeHealth::kReady) << "a cordon is not ill health";
  ASSERT_EQ(o.node.taints.size(), 3u);
  EXPECT_EQ(o.node.taints[2], (gpu::Taint{"node.kubernetes.io/unschedulable", "", "NoSchedule"}));
  // Kubernetes adds that taint to cordoned nodes itself: it is not doubled.
  node["spec"]["taints"].push_back({{"key", "node.kubernetes.io/unschedulable"}, {"effect", "NoSchedule"}});
  EXPECT_EQ(Ok(node).node.taints.size(), 3u);
}

TEST_F(NodeObservationTest, UnknownProductIsObservedWithoutGpusAndAReason) {
  json labels = {{"nvidia.com/gpu.product", "NVIDIA-Imaginary-9000"}, {"nvidia.com/gpu.count", "8"}};
  auto observed = Observe(Node("odd-0", labels, {{"nvidia.com/gpu", "8"}}));
  ASSERT_TRUE(observed.ok()) << observed.status().ToString();
  EXPECT_EQ(observed->node.name, "odd-0");
  EXPECT_EQ(observed->node.cpu_milli, 96000);
  EXPECT_TRUE(observed->node.gpus.empty());
  ASSERT_EQ(observed->issues.size(), 1u);
  EXPECT_EQ(observed->issues[0].reason, "UnknownGpuProduct");
  EXPECT_NE(observed->issues[0].message.find("NVIDIA-Imaginary-9000"), std::string::npos);
}

TEST_F(NodeObservationTest, MalformedObjectsAreRefusedNamingTheField) {
  const json good = Node("h100-0", H100Labels("all-balanced", "success"), BalancedAllocatable());
  ASSERT_TRUE(Observe(good).ok());
  auto with = [&](const json::json_pointer& at, const json& value) {
    json node = good;
    node[at] = value;
    return node;
  };
  ExpectFieldError(with("/status/allocatable/cpu"_json_pointer, "lots"), "status.allocatable.cpu");
  ExpectFieldError(with("/status/allocatable/cpu"_json_pointer, 96), "status.allocatable.cpu");
  ExpectFieldError(with("/status/allocatable/memory"_json_pointer, "-1Gi"), "status.allocatable.memory");
  ExpectFieldError(with("/status/allocatable/memory"_json_pointer, "9000Pi"), "status.allocatable.memory");
  ExpectFieldError(with("/status/allocatable/nvidia.com~1gpu"_json_pointer, "1500m"),
                   "status.allocatable[\"nvidia.com/gpu\"]");
  ExpectFieldError(with("/status/allocatable/nvidia.com~1mig-1g.10gb"_json_pointer, "x"),
                   "status.allocatable[\"nvidia.com/mig-1g.10gb\"]");
  ExpectFieldError(with("/metadata/labels/nvidia.com~1gpu.count"_json_pointer, "eight"),
                   "metadata.labels[\"nvidia.com/gpu.count\"]");
  ExpectFieldError(with("/metadata/labels/nvidia.com~1gpu.count"_json_pointer, "0"),
                   "metadata.labels[\"nvidia.com/gpu.count\"]");
  ExpectFieldError(with("/metadata/labels/team"_json_pointer, 7), "metadata.labels[\"team\"]");
  ExpectFieldError(with("/metadata/name"_json_pointer, ""), "metadata.name");
  ExpectFieldError(with("/spec/taints"_json_pointer, {{{"key", "k"}, {"effect", 1}}}), "spec.taints[0].effect");
  ExpectFieldError(with("/spec/unschedulable"_json_pointer, "yes"), "spec.unschedulable");

  const std::string annotation = "metadata.annotations[\"kubesim.septa.dev/gpus\"]";
  json gpus = json::array();
  for (int i = 0; i < 8; ++i)
    gpus.push_back({{"index", i}, {"uuid", gpu::SyntheticGpuUuid("h100-0", i)}, {"migEnabled", false}});
  const json::json_pointer at("/metadata/annotations/kubesim.septa.dev~1gpus");
  ASSERT_TRUE(Observe(with(at, gpus.dump())).ok());
  ExpectFieldError(with(at, "[not json"), annotation);
  json short_list = gpus;
  short_list.erase(7);
  ExpectFieldError(with(at, short_list.dump()), annotation);
  json twice = gpus;
  twice[7]["index"] = 0;
  ExpectFieldError(with(at, twice.dump()), annotation + "[7].index");
  json bad_profile = gpus;
  bad_profile[2]["migEnabled"] = true;
  bad_profile[2]["migDevices"] = {{{"profile", "3g.20gb"}, {"start", 0}}};
  ExpectFieldError(with(at, bad_profile.dump()), annotation + "[2].migDevices[0].profile");
  json overlap = gpus;
  overlap[2]["migEnabled"] = true;
  overlap[2]["migDevices"] = {{{"profile", "3g.40gb"}, {"start", 0}}, {{"profile", "2g.20gb"}, {"start", 2}}};
  ExpectFieldError(with(at, overlap.dump()), annotation + "[2].migDevices");
  json ids = gpus;
  ids[2]["migEnabled"] = true;
  ids[2]["migDevices"] = {{{"profile", "3g.40gb"}, {"start", 0}, {"giId", 1}},
                          {{"profile", "3g.40gb"}, {"start", 4}, {"giId", 2}}};
  ASSERT_TRUE(Observe(with(at, ids.dump())).ok());
  for (const json& bad : {json(-1), json("2"), json(1.5), json(1LL << 40)}) {
    json bad_id = ids;
    bad_id[2]["migDevices"][1]["giId"] = bad;
    ExpectFieldError(with(at, bad_id.dump()), annotation + "[2].migDevices[1].giId");
  }
  json same_id = ids;
  same_id[2]["migDevices"][1]["giId"] = 1;
  ExpectFieldError(with(at, same_id.dump()), annotation + "[2].migDevices[1].giId");
  json other_gpu = ids;
  other_gpu[3] = ids[2];
  other_gpu[3]["index"] = 3;
  other_gpu[3]["uuid"] = gpu::SyntheticGpuUuid("h100-0", 3);
  EXPECT_TRUE(Observe(with(at, other_gpu.dump())).ok()) << "ids are per GPU";
}

// kubesim's nodes observed as the inventory controller will see them: the
// annotation and the labels-only path must tell the same story.
TEST_F(NodeObservationTest, KubesimNodesReadTheSameWithAndWithoutTheAnnotation) {
  kubesim::KubeSimOptions options;
  options.inventory = *kubesim::ParseInventory(std::string(kubesim::SampleInventoryYaml()), "sample");
  kubesim::KubeSim sim(options);
  ASSERT_TRUE(sim.Start().ok());
  auto client = std::move(*kube::Client::Create(*kube::ParseKubeconfig(*sim.AdminKubeconfig())));
  auto nodes = client->List(kube::kNodes, "", {});
  ASSERT_TRUE(nodes.ok()) << nodes.status().ToString();
  int gpu_nodes = 0, mig_gpus = 0;
  for (const auto& object : nodes->items) {
    json node = object.ToJson();
    NodeObservation with = Ok(node);
    EXPECT_TRUE(with.issues.empty()) << with.node.name << ": " << with.issues[0].message;
    EXPECT_TRUE(with.layout_settled);
    EXPECT_EQ(with.node.health, gpu::NodeHealth::kReady);
    node["metadata"]["annotations"].erase(kube::kGpuIdentityAnnotation);
    NodeObservation without = Ok(node);
    EXPECT_TRUE(without.issues.empty()) << without.node.name << ": " << without.issues[0].message;
    ASSERT_EQ(with.node.gpus.size(), without.node.gpus.size()) << with.node.name;
    for (std::size_t i = 0; i < with.node.gpus.size(); ++i) {
      EXPECT_EQ(with.node.gpus[i].uuid, without.node.gpus[i].uuid);
      EXPECT_EQ(with.node.gpus[i].mig_enabled, without.node.gpus[i].mig_enabled);
      EXPECT_EQ(with.node.gpus[i].mig_layout, without.node.gpus[i].mig_layout) << with.node.name << " GPU " << i;
      // Only the annotation tells the GPU-instance ids: one per instance, as kubesim numbers them.
      const gpu::InventoryGpu& g = with.node.gpus[i];
      ASSERT_EQ(g.mig_gi_ids.size(), g.mig_layout.size()) << with.node.name << " GPU " << i;
      for (std::size_t d = 0; d < g.mig_layout.size(); ++d) {
        EXPECT_EQ(g.mig_gi_ids.at(g.mig_layout[d].start),
                  kubesim::SimulatedGpuInstanceId(*catalog_.Find(g.model), g.mig_layout, d));
      }
      EXPECT_TRUE(without.node.gpus[i].mig_gi_ids.empty());
      mig_gpus += with.node.gpus[i].mig_enabled ? 1 : 0;
    }
    gpu_nodes += with.node.gpus.empty() ? 0 : 1;
  }
  EXPECT_GE(gpu_nodes, 3);
  EXPECT_GT(mig_gpus, 0) << "the sample inventory has MIG nodes";
}

}  // namespace
}  // namespace septa::reconcile
