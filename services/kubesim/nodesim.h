// Simulated nodes: Node objects with GPU capacity and GPU feature discovery
// labels, a scheduler that binds pending pods where they fit, pods that turn
// Running after a delay, and a MIG manager that applies mig-parted layouts
// when a node's nvidia.com/mig.config label changes. Driven by Tick(), with
// time from the cluster's Clock so tests are deterministic.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "gpu/catalog.h"
#include "gpu/mig_parted.h"
#include "services/kubesim/api_server.h"
#include "services/kubesim/inventory.h"
#include "services/kubesim/pod_exits.h"
#include "services/kubesim/pod_index.h"

namespace septa::kubesim {

// The GPU-instance id (DCGM's GPU_I_ID, NVML's GPU instance id) kubesim
// gives instance `i` of `layout` on a GPU of `model`: its slot in the binary
// tree of the GPU's memory slices, numbered from the root (the whole GPU 0,
// halves 1-2, quarters 3-6, eighths 7-14 on an 8-slice GPU), so that an
// instance's id follows from its size and placement alone. Instances that
// fit no slot (sizes that are not a power of two, unaligned starts) get
// 2 x memory slices + i. The simulator's rule: a driver numbers instances
// itself (USAGE-FACTS §1.4); it is published in kube::kGpuIdentityAnnotation
// as "giId" and is what kubesim's dcgm-exporter reports.
int SimulatedGpuInstanceId(const gpu::GpuModel& model, const gpu::MigLayout& layout, std::size_t i);

struct NodeSimOptions {
  std::set<std::string> scheduler_names = {"default-scheduler"};
  std::chrono::milliseconds pod_start_delay{500};
  std::chrono::milliseconds mig_reconfigure_delay{2000};
  // The GPU operator's custom mig-parted configs (a ConfigMap, key
  // config.yaml): its MIG manager applies the configs named there too.
  std::string mig_parted_namespace = "gpu-operator";
  std::string mig_parted_configmap = "septa-mig-parted-config";
};

class NodeSim {
 public:
  NodeSim(Cluster& cluster, ApiServer& api, Inventory inventory, NodeSimOptions options);

  // Checks the inventory against the GPU catalog and creates the Node objects.
  Status Start();
  // One pass: MIG manager, scheduler, pod start-up, containers that exit.
  void Tick();

 private:
  struct GpuNode {
    const gpu::GpuModel* model = nullptr;
    int count = 0;
    std::string applied_config;  // what the node's MIG resources reflect
    std::optional<TimePoint> pending_since;
  };

  nlohmann::json NodeObject(const NodeSpec& spec) const;
  // Every GPU's MIG setup under `config` (empty: whole GPUs); an error when
  // the config is unknown or does not fit the model.
  Result<std::vector<gpu::GpuMigSetup>> MigSetups(const gpu::GpuModel& model, int count,
                                                  const std::string& config) const;
  // The kube::kGpuIdentityAnnotation value for node `name`'s GPUs.
  static std::string GpuIdentity(const std::string& name, const gpu::GpuModel& model,
                                 const std::vector<gpu::GpuMigSetup>& setups);
  // capacity entries and labels for `model` x `count` under `config`.
  void GpuResources(const gpu::GpuModel& model, int count, const std::string& config, nlohmann::json& capacity,
                    nlohmann::json& labels) const;
  // layouts_: the built-in ones and those of the custom ConfigMap, read now.
  void ReadLayouts();
  void ReconcileMig();
  void Schedule();
  void StartPods();

  Cluster& cluster_;
  ApiServer& api_;
  Inventory inventory_;
  NodeSimOptions options_;
  gpu::MigPartedConfig builtin_layouts_;  // stock ones and the inventory's migConfigs
  gpu::MigPartedConfig layouts_;
  std::map<std::string, GpuNode> gpu_nodes_;   // by node name
  std::map<std::string, TimePoint> bound_at_;  // pod uid -> when we saw it bound
  std::shared_ptr<PodIndex> pods_;             // watching the storage from Start
  PodExits exits_;
  int next_pod_ip_ = 2;
};

}  // namespace septa::kubesim
