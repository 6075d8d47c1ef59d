#include "services/kubesim/inventory.h"

#include <yaml-cpp/yaml.h>

#include "common/documents.h"
#include "common/quantity.h"
#include "services/base/yaml_json.h"

namespace septa::kubesim {

Result<std::vector<std::string>> ExpandBraceRange(const std::string& pattern) {
  auto open = pattern.find('{');
  if (open == std::string::npos) return std::vector<std::string>{pattern};
  auto dots = pattern.find("..", open);
  auto close = pattern.find('}', open);
  if (dots == std::string::npos || close == std::string::npos || dots > close) {
    return InvalidArgument("bad brace range in \"" + pattern + "\": expected {A..B}");
  }
  int from = 0, to = 0;
  try {
    from = std::stoi(pattern.substr(open + 1, dots - open - 1));
    to = std::stoi(pattern.substr(dots + 2, close - dots - 2));
  } catch (...) {
    return InvalidArgument("bad brace range in \"" + pattern + "\": bounds must be integers");
  }
  if (to < from || to - from > 10'000) return InvalidArgument("bad brace range in \"" + pattern + "\"");
  std::vector<std::string> out;
  for (int i = from; i <= to; ++i) {
    out.push_back(pattern.substr(0, open) + std::to_string(i) + pattern.substr(close + 1));
  }
  return out;
}

namespace {

// A taint's fields are strings; YAML reads `value: true` as a boolean (core
// schema), which the node object could not hold, so it must be quoted.
Status CheckTaints(const nlohmann::json& taints, const std::string& where) {
  for (std::size_t i = 0; i < taints.size(); ++i) {
    if (!taints[i].is_object()) return InvalidArgument(where + "[" + std::to_string(i) + "]: must be a map");
    for (const auto& [field, value] : taints[i].items()) {
      if (!value.is_string()) {
        return InvalidArgument(where + "[" + std::to_string(i) + "]." + field + ": must be a string (quote it)");
      }
    }
  }
  return Status::Ok();
}

}  // namespace

Result<Inventory> ParseInventory(const std::string& yaml_text, const std::string& source) {
  Inventory inv;
  auto parsed = ParseYaml(yaml_text);
  if (!parsed.ok()) return InvalidArgument(source + ": " + parsed.status().message());
  try {
    const YAML::Node& root = *parsed;
    if (!root["nodes"] || !root["nodes"].IsSequence()) return InvalidArgument(source + ": `nodes` must be a list");
    int index = 0;
    for (const auto& n : root["nodes"]) {
      std::string where = source + ": nodes[" + std::to_string(index++) + "]";
      if (!n["name"]) return InvalidArgument(where + ".name: required");
      auto names = ExpandBraceRange(n["name"].as<std::string>());
      if (!names.ok()) return InvalidArgument(where + ".name: " + names.status().message());
      NodeSpec spec;
      if (n["cpu"]) spec.cpu = n["cpu"].as<std::string>();
      if (n["memory"]) spec.memory = n["memory"].as<std::string>();
      if (!ParseQuantityMilli(spec.cpu).ok()) return InvalidArgument(where + ".cpu: bad quantity \"" + spec.cpu + "\"");
      if (!ParseQuantityMilli(spec.memory).ok())
        return InvalidArgument(where + ".memory: bad quantity \"" + spec.memory + "\"");
      if (n["labels"]) spec.labels = n["labels"].as<std::map<std::string, std::string>>();
      if (n["taints"]) {
        spec.taints = base::YamlToJson(n["taints"]);
        if (!spec.taints.is_array()) return InvalidArgument(where + ".taints: must be a list");
        Status taints = CheckTaints(spec.taints, where + ".taints");
        if (!taints.ok()) return taints;
      }
      if (YAML::Node g = n["gpus"]) {
        if (!g["model"]) return InvalidArgument(where + ".gpus.model: required");
        spec.gpu_model = g["model"].as<std::string>();
        spec.gpu_count = g["count"] ? g["count"].as<int>() : 1;
        if (spec.gpu_count < 1 || spec.gpu_count > 64) return InvalidArgument(where + ".gpus.count: must be 1..64");
        if (g["migConfig"]) spec.mig_config = g["migConfig"].as<std::string>();
      }
      for (auto& name : *names) {
        NodeSpec copy = spec;
        copy.name = name;
        inv.nodes.push_back(std::move(copy));
      }
    }
    if (root["migConfigs"]) {
      YAML::Emitter out;
      out << root["migConfigs"];
      inv.mig_configs_yaml = out.c_str();
    }
  } catch (const YAML::Exception& e) {
    return InvalidArgument(source + ": " + e.what());
  }
  return inv;
}

}  // namespace septa::kubesim
