// The simulated nodes of a kubesim cluster, from an inventory YAML:
//   nodes: [{name: h100-{0..3}, cpu: "96", memory: 1Ti, labels: {...}, taints: [...],
//            gpus: {model: H100-80GB, count: 8, migConfig: all-balanced}}]
//   migConfigs: {version: v1, mig-configs: {...}}   # mig-parted, adds to the stock layouts
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace septa::kubesim {

struct NodeSpec {
  std::string name;
  std::string cpu = "8";
  std::string memory = "32Gi";
  std::map<std::string, std::string> labels;
  nlohmann::json taints = nlohmann::json::array();  // Kubernetes taint objects
  std::string gpu_model;                            // catalog canonical name; empty: no GPUs
  int gpu_count = 0;
  std::string mig_config;  // mig-parted layout name; empty: whole GPUs
};

struct Inventory {
  std::vector<NodeSpec> nodes;
  std::string mig_configs_yaml;  // the `migConfigs` document, re-emitted as YAML
};

// deploy/dev/inventory.yaml as built in: a few H100 MIG, A100, T4 and CPU nodes.
std::string_view SampleInventoryYaml();

// Errors name `source` and the node or field at fault.
Result<Inventory> ParseInventory(const std::string& yaml_text, const std::string& source);

// "h100-{0..3}" -> h100-0 ... h100-3; names without a range stay as they are.
Result<std::vector<std::string>> ExpandBraceRange(const std::string& pattern);

}  // namespace septa::kubesim
