// The node simulator through the API: GPU capacity, scheduling, start-up
// and MIG layout changes, with a fake clock.
#include <gtest/gtest.h>

#include <thread>

#include "gpu/gpu_uuid.h"
#include "services/kube/client.h"
#include "services/kube/gpu_labels.h"
#include "services/kube/resources.h"
#include "services/kubesim/kubesim.h"
#include "tests/support/fake_clock.h"
#include "tests/support/seeded_random.h"

namespace septa::kubesim {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;
using kube::kNodes;
using kube::kPods;

constexpr const char* kInventory = R"(
nodes:
  - name: h100-0
    cpu: "96"
    memory: 1Ti
    taints: [{key: dedicated, value: gpu, effect: NoSchedule}]
    gpus: {model: H100-80GB, count: 8, migConfig: all-balanced}
  - name: a100-0
    cpu: "64"
    memory: 512Gi
    labels: {topology.kubernetes.io/zone: z1}
    gpus: {model: A100-80GB, count: 8}
  - name: t4-0
    cpu: "32"
    memory: 128Gi
    labels: {topology.kubernetes.io/zone: z2}
    gpus: {model: T4, count: 4}
)";

class kubesimNodes : public ::testing::Test {
 protected:
  void SetUp() override {
    KubeSimOptions options;
    options.clock = &clock_;
    options.random = &random_;
    options.tick_interval = 5ms;
    options.nodes.pod_start_delay = 1s;
    options.nodes.mig_reconfigure_delay = 2s;
    options.nodes.scheduler_names = {"default-scheduler", "kai-scheduler"};
    options.inventory = *ParseInventory(kInventory, "test");
    sim_ = std::make_unique<KubeSim>(options);
    ASSERT_TRUE(sim_->Start().ok());
    auto config = kube::ParseKubeconfig(*sim_->AdminKubeconfig());
    client_ = std::move(*kube::Client::Create(*config));
  }

  json Node(const std::string& name) { return *client_->Get(kNodes, "", name); }

  // Polls until `pred` holds for the object (ticks run every 5 ms).
  json WaitFor(const kube::Resource& r, const std::string& ns, const std::string& name,
               const std::function<bool(const json&)>& pred) {
    json last;
    for (int i = 0; i < 400; ++i) {
      auto got = client_->Get(r, ns, name);
      if (got.ok()) {
        last = *got;
        if (pred(last)) return last;
      }
      std::this_thread::sleep_for(5ms);
    }
    ADD_FAILURE() << "condition never held for " << name << ": " << last.dump();
    return last;
  }

  void CreatePod(const std::string& name, json resources, json extra_spec = json::object()) {
    json pod = {
        {"apiVersion", "v1"},
        {"kind", "Pod"},
        {"metadata", {{"name", name}}},
        {"spec", {{"containers", {{{"name", "c"}, {"image", "cuda"}, {"resources", {{"limits", resources}}}}}}}}};
    pod["spec"].update(extra_spec);
    ASSERT_TRUE(client_->Create(kPods, "default", pod).ok());
  }

  // The node's per-GPU identity annotation, parsed.
  static json GpuIdentity(const json& node) {
    return json::parse(node["metadata"]["annotations"][kube::kGpuIdentityAnnotation].get<std::string>());
  }
  // "3g.40gb@4 2g.20gb@2 ..." for GPU `index` of the annotation.
  static std::string Instances(const json& gpus, int index) {
    std::string out;
    for (const auto& d : gpus[index]["migDevices"]) {
      if (!out.empty()) out += ' ';
      out += d["profile"].get<std::string>() + "@" + std::to_string(d["start"].get<int>());
    }
    return out;
  }

  static std::string NodeOf(const json& pod) { return pod["spec"].value("nodeName", ""); }
  static bool Unschedulable(const json& pod) {
    for (const auto& c : pod["status"].value("conditions", json::array()))
      if (c.value("reason", "") == "Unschedulable") return true;
    return false;
  }

  FakeClock clock_;
  SeededRandom random_{42};
  std::unique_ptr<KubeSim> sim_;
  std::unique_ptr<kube::Client> client_;
};

TEST_F(kubesimNodes, NodesPublishGpuCapacityAndFeatureLabels) {
  json h100 = Node("h100-0");
  const json& cap = h100["status"]["allocatable"];
  EXPECT_EQ(cap["nvidia.com/gpu"], "0") << "all GPUs are MIG-partitioned";
  EXPECT_EQ(cap["nvidia.com/mig-1g.10gb"], "16");
  EXPECT_EQ(cap["nvidia.com/mig-2g.20gb"], "8");
  EXPECT_EQ(cap["nvidia.com/mig-3g.40gb"], "8");
  const json& labels = h100["metadata"]["labels"];
  EXPECT_EQ(labels["nvidia.com/gpu.product"], "NVIDIA-H100-80GB-HBM3");
  EXPECT_EQ(labels["nvidia.com/gpu.count"], "8");
  EXPECT_EQ(labels["nvidia.com/gpu.family"], "hopper");
  EXPECT_EQ(labels["nvidia.com/mig.strategy"], "mixed");
  EXPECT_EQ(labels["nvidia.com/mig.config"], "all-balanced");
  EXPECT_EQ(labels["nvidia.com/mig.config.state"], "success");
  EXPECT_EQ(labels["nvidia.com/mig-3g.40gb.count"], "8");
  EXPECT_EQ(labels["nvidia.com/mig-3g.40gb.slices.gi"], "3");
  json t4 = Node("t4-0");
  EXPECT_EQ(t4["status"]["capacity"]["nvidia.com/gpu"], "4");
  EXPECT_EQ(t4["metadata"]["labels"]["nvidia.com/mig.capable"], "false");
  EXPECT_EQ(t4["metadata"]["labels"]["topology.kubernetes.io/zone"], "z2");
}

TEST_F(kubesimNodes, NodesPublishEachGpusIdentityAndMigInstances) {
  json h100 = GpuIdentity(Node("h100-0"));
  ASSERT_EQ(h100.size(), 8u);
  for (int i = 0; i < 8; ++i) {
    EXPECT_EQ(h100[i]["index"], i);
    EXPECT_EQ(h100[i]["uuid"], gpu::SyntheticGpuUuid("h100-0", i));
    EXPECT_EQ(h100[i]["migEnabled"], true);
    EXPECT_EQ(Instances(h100, i), "3g.40gb@4 2g.20gb@2 1g.10gb@0 1g.10gb@1") << "all-balanced, placed";
  }
  EXPECT_NE(h100[0]["uuid"], h100[1]["uuid"]);
  json a100 = GpuIdentity(Node("a100-0"));
  ASSERT_EQ(a100.size(), 8u);
  EXPECT_EQ(a100[3]["migEnabled"], false);
  EXPECT_TRUE(a100[3]["migDevices"].empty());
  EXPECT_EQ(a100[3]["uuid"], gpu::SyntheticGpuUuid("a100-0", 3));
  json t4 = GpuIdentity(Node("t4-0"));
  ASSERT_EQ(t4.size(), 4u);
  EXPECT_EQ(t4[0]["migEnabled"], false);
}

TEST_F(kubesimNodes, BindsOnlyWhereThePodFitsAndStartsItAfterTheDelay) {
  CreatePod("two-gpus", {{"nvidia.com/gpu", "2"}}, {{"nodeSelector", {{"topology.kubernetes.io/zone", "z2"}}}});
  CreatePod("too-many", {{"nvidia.com/gpu", "5"}}, {{"nodeSelector", {{"topology.kubernetes.io/zone", "z2"}}}});
  CreatePod("mig-untolerated", {{"nvidia.com/mig-3g.40gb", "1"}});
  CreatePod(
      "mig", {{"nvidia.com/mig-3g.40gb", "1"}},
      {{"tolerations", {{{"key", "dedicated"}, {"operator", "Equal"}, {"value", "gpu"}, {"effect", "NoSchedule"}}}}});
  CreatePod("affinity", {{"cpu", "2"}},
            {{"affinity",
              {{"nodeAffinity",
                {{"requiredDuringSchedulingIgnoredDuringExecution",
                  {{"nodeSelectorTerms",
                    {{{"matchExpressions",
                       {{{"key", "topology.kubernetes.io/zone"}, {"operator", "In"}, {"values", {"z1"}}}}}}}}}}}}}}});
  CreatePod("other-scheduler", {{"cpu", "1"}}, {{"schedulerName", "volcano"}});
  CreatePod("kai", {{"cpu", "1"}}, {{"schedulerName", "kai-scheduler"}, {"nodeName", ""}});

  EXPECT_EQ(NodeOf(WaitFor(kPods, "default", "two-gpus", [](const json& p) { return !NodeOf(p).empty(); })), "t4-0");
  EXPECT_EQ(NodeOf(WaitFor(kPods, "default", "mig", [](const json& p) { return !NodeOf(p).empty(); })), "h100-0");
  EXPECT_EQ(NodeOf(WaitFor(kPods, "default", "affinity", [](const json& p) { return !NodeOf(p).empty(); })), "a100-0");
  EXPECT_FALSE(NodeOf(WaitFor(kPods, "default", "kai", [](const json& p) { return !NodeOf(p).empty(); })).empty());
  EXPECT_TRUE(Unschedulable(WaitFor(kPods, "default", "too-many", Unschedulable)));
  EXPECT_TRUE(Unschedulable(WaitFor(kPods, "default", "mig-untolerated", Unschedulable)));
  json other = *client_->Get(kPods, "default", "other-scheduler");
  EXPECT_TRUE(NodeOf(other).empty());
  EXPECT_FALSE(Unschedulable(other)) << "pods of schedulers kubesim does not serve are left alone";

  EXPECT_EQ((*client_->Get(kPods, "default", "two-gpus"))["status"]["phase"], "Pending") << "no time has passed";
  clock_.Advance(1500ms);
  json running =
      WaitFor(kPods, "default", "two-gpus", [](const json& p) { return p["status"].value("phase", "") == "Running"; });
  EXPECT_EQ(running["status"]["podIP"].get<std::string>().rfind("10.244.", 0), 0u);

  CreatePod("two-more", {{"nvidia.com/gpu", "2"}}, {{"nodeSelector", {{"topology.kubernetes.io/zone", "z2"}}}});
  EXPECT_EQ(NodeOf(WaitFor(kPods, "default", "two-more", [](const json& p) { return !NodeOf(p).empty(); })), "t4-0");
  CreatePod("one-too-many", {{"nvidia.com/gpu", "1"}}, {{"nodeSelector", {{"topology.kubernetes.io/zone", "z2"}}}});
  EXPECT_TRUE(Unschedulable(WaitFor(kPods, "default", "one-too-many", Unschedulable))) << "the T4 node is full";
}

// A node holds what its pods hold as the scheduler counts them: a sidecar's
// GPU beside the containers', a plain init container's while it runs. The
// T4 node's 4 GPUs fit these two pods of 2 each, and no third one.
TEST_F(kubesimNodes, SidecarsAndInitContainersCountAgainstTheNode) {
  const json t4 = {{"nodeSelector", {{"topology.kubernetes.io/zone", "z2"}}}};
  json sidecar = t4;
  sidecar["initContainers"] = {{{"name", "proxy"},
                                {"image", "cuda"},
                                {"restartPolicy", "Always"},
                                {"resources", {{"limits", {{"nvidia.com/gpu", "1"}}}}}}};
  CreatePod("with-sidecar", {{"nvidia.com/gpu", "1"}}, sidecar);
  json warm = t4;
  warm["initContainers"] = {
      {{"name", "warm"}, {"image", "cuda"}, {"resources", {{"limits", {{"nvidia.com/gpu", "2"}}}}}}};
  CreatePod("with-init", {{"cpu", "1"}}, warm);
  EXPECT_EQ(NodeOf(WaitFor(kPods, "default", "with-sidecar", [](const json& p) { return !NodeOf(p).empty(); })),
            "t4-0");
  EXPECT_EQ(NodeOf(WaitFor(kPods, "default", "with-init", [](const json& p) { return !NodeOf(p).empty(); })), "t4-0");
  CreatePod("one-more", {{"nvidia.com/gpu", "1"}}, t4);
  EXPECT_TRUE(Unschedulable(WaitFor(kPods, "default", "one-more", Unschedulable)))
      << "2 + 2 of the node's 4 GPUs are held: not over-committed";
}

TEST_F(kubesimNodes, MigManagerAppliesALayoutOrFailsWhileInUse) {
  auto set_config = [&](const std::string& node, const std::string& config) {
    ASSERT_TRUE(client_
                    ->Patch(kNodes, "", node, kube::PatchType::kMerge,
                            json{{"metadata", {{"labels", {{"nvidia.com/mig.config", config}}}}}}.dump())
                    .ok());
  };
  auto state = [](const std::string& want) {
    return [want](const json& n) { return n["metadata"]["labels"].value("nvidia.com/mig.config.state", "") == want; };
  };
  set_config("a100-0", "all-balanced");
  WaitFor(kNodes, "", "a100-0", state("pending"));
  clock_.Advance(2500ms);
  json a100 = WaitFor(kNodes, "", "a100-0", state("success"));
  EXPECT_EQ(a100["status"]["allocatable"]["nvidia.com/gpu"], "0");
  EXPECT_EQ(a100["status"]["allocatable"]["nvidia.com/mig-3g.40gb"], "8");
  EXPECT_EQ(a100["metadata"]["labels"]["nvidia.com/mig-1g.10gb.count"], "16");
  EXPECT_EQ(Instances(GpuIdentity(a100), 5), "3g.40gb@4 2g.20gb@2 1g.10gb@0 1g.10gb@1") << "the annotation follows";

  CreatePod("using-mig", {{"nvidia.com/mig-1g.10gb", "1"}},
            {{"tolerations", {{{"key", "dedicated"}, {"operator", "Exists"}}}},
             {"nodeSelector", {{"kubernetes.io/hostname", "h100-0"}}}});
  WaitFor(kPods, "default", "using-mig", [](const json& p) { return !NodeOf(p).empty(); });
  set_config("h100-0", "all-disabled");
  WaitFor(kNodes, "", "h100-0", state("pending"));
  clock_.Advance(2500ms);
  json h100 = WaitFor(kNodes, "", "h100-0", state("failed"));
  EXPECT_EQ(h100["status"]["allocatable"]["nvidia.com/mig-1g.10gb"], "16") << "layout unchanged";
  EXPECT_EQ(Instances(GpuIdentity(h100), 0), "3g.40gb@4 2g.20gb@2 1g.10gb@0 1g.10gb@1") << "instances unchanged";

  ASSERT_TRUE(client_->Delete(kPods, "default", "using-mig").ok());
  set_config("h100-0", "all-1g.10gb");
  WaitFor(kNodes, "", "h100-0", state("pending"));
  clock_.Advance(2500ms);
  h100 = WaitFor(kNodes, "", "h100-0", state("success"));
  EXPECT_EQ(h100["status"]["allocatable"]["nvidia.com/mig-1g.10gb"], "56");
  EXPECT_FALSE(h100["status"]["allocatable"].contains("nvidia.com/mig-3g.40gb"));
  json gpus = GpuIdentity(h100);
  EXPECT_EQ(Instances(gpus, 7), "1g.10gb@0 1g.10gb@1 1g.10gb@2 1g.10gb@3 1g.10gb@4 1g.10gb@5 1g.10gb@6");
  EXPECT_EQ(gpus[7]["uuid"], gpu::SyntheticGpuUuid("h100-0", 7)) << "a re-layout keeps the GPU's identity";

  set_config("h100-0", "all-disabled");
  WaitFor(kNodes, "", "h100-0", state("pending"));
  clock_.Advance(2500ms);
  gpus = GpuIdentity(WaitFor(kNodes, "", "h100-0", state("success")));
  EXPECT_EQ(gpus[2]["migEnabled"], false);
  EXPECT_TRUE(gpus[2]["migDevices"].empty());
}

TEST_F(kubesimNodes, MigManagerAppliesCustomConfigsFromTheGpuOperatorsConfigMap) {
  auto set_config = [&](const std::string& config) {
    ASSERT_TRUE(client_
                    ->Patch(kNodes, "", "h100-0", kube::PatchType::kMerge,
                            json{{"metadata", {{"labels", {{"nvidia.com/mig.config", config}}}}}}.dump())
                    .ok());
  };
  auto state = [](const std::string& want) {
    return [want](const json& n) { return n["metadata"]["labels"].value("nvidia.com/mig.config.state", "") == want; };
  };
  // Not there yet: an unknown config fails.
  set_config("custom-a");
  WaitFor(kNodes, "", "h100-0", state("pending"));
  clock_.Advance(2500ms);
  WaitFor(kNodes, "", "h100-0", state("failed"));

  // GPU 1 gets two 3g.40gb, the others keep MIG off.
  const json configmap = {{"apiVersion", "v1"},
                          {"kind", "ConfigMap"},
                          {"metadata", {{"name", "septa-mig-parted-config"}, {"namespace", "gpu-operator"}}},
                          {"data",
                           {{"config.yaml",
                             "version: v1\nmig-configs:\n  custom-b:\n    - devices: [1]\n"
                             "      mig-enabled: true\n      mig-devices:\n        3g.40gb: 2\n"}}}};
  ASSERT_TRUE(client_->Create(kube::kConfigMaps, "gpu-operator", configmap).ok());
  set_config("custom-b");
  WaitFor(kNodes, "", "h100-0", state("pending"));
  clock_.Advance(2500ms);
  json h100 = WaitFor(kNodes, "", "h100-0", state("success"));
  const json gpus = GpuIdentity(h100);
  EXPECT_EQ(Instances(gpus, 1), "3g.40gb@0 3g.40gb@4");
  EXPECT_EQ(gpus[0]["migEnabled"], false);
  EXPECT_EQ(h100["status"]["allocatable"]["nvidia.com/mig-3g.40gb"], "2");
}

}  // namespace
}  // namespace septa::kubesim
