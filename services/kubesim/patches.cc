#include "services/kubesim/patches.h"

#include <yaml-cpp/yaml.h>

#include <map>

#include "services/base/yaml_json.h"

namespace septa::kubesim {

using nlohmann::json;

namespace {

// Kubernetes' patchMergeKey for the common built-in list fields.
const std::map<std::string_view, std::string_view>& MergeKeys() {
  static const std::map<std::string_view, std::string_view> keys = {
      {"containers", "name"},
      {"initContainers", "name"},
      {"ephemeralContainers", "name"},
      {"volumes", "name"},
      {"env", "name"},
      {"volumeMounts", "mountPath"},
      {"volumeDevices", "devicePath"},
      {"ports", "containerPort"},
      {"imagePullSecrets", "name"},
      {"hostAliases", "ip"},
      {"conditions", "type"},
      {"ownerReferences", "uid"},
      {"topologySpreadConstraints", "topologyKey"},
      {"resourceClaims", "name"},
  };
  return keys;
}

json StrategicMerge(const json& target, const json& patch);

json MergeList(const json& target, const json& patch, std::string_view key) {
  json out = target.is_array() ? target : json::array();
  for (const auto& item : patch) {
    if (!item.is_object() || !item.contains(key)) {
      out.push_back(item);
      continue;
    }
    auto pos = std::find_if(out.begin(), out.end(),
                            [&](const json& e) { return e.is_object() && e.contains(key) && e[key] == item[key]; });
    bool remove = item.value("$patch", "") == "delete";
    if (pos == out.end()) {
      if (!remove) out.push_back(StrategicMerge(json::object(), item));
    } else if (remove) {
      out.erase(pos);
    } else {
      *pos = StrategicMerge(*pos, item);
    }
  }
  return out;
}

json StrategicMerge(const json& target, const json& patch) {
  if (!patch.is_object()) return patch;
  if (patch.value("$patch", "") == "replace") {
    json replaced = patch;
    replaced.erase("$patch");
    return replaced;
  }
  json out = target.is_object() ? target : json::object();
  for (const auto& [k, v] : patch.items()) {
    if (k == "$patch" || k.rfind("$setElementOrder/", 0) == 0 || k == "$retainKeys") continue;
    if (v.is_null()) {
      out.erase(k);
    } else if (v.is_object()) {
      out[k] = StrategicMerge(out.contains(k) ? out[k] : json::object(), v);
    } else if (v.is_array() && !MergeKeyFor(k).empty()) {
      out[k] = MergeList(out.contains(k) ? out[k] : json::array(), v, MergeKeyFor(k));
    } else {
      out[k] = v;
    }
  }
  return out;
}

}  // namespace

std::string_view MergeKeyFor(std::string_view field) {
  auto it = MergeKeys().find(field);
  return it == MergeKeys().end() ? std::string_view() : it->second;
}

ApiResult<json> ParseJsonOrYaml(std::string_view text) {
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_discarded()) return j;
  try {
    return base::YamlToJson(YAML::Load(std::string(text)));
  } catch (const std::exception& e) {
    return BadRequestError(std::string("the body of the request was in an unknown format: ") + e.what());
  }
}

ApiResult<json> ApplyMergePatch(const json& target, const json& patch) {
  if (!patch.is_object()) return BadRequestError("a merge patch must be a JSON object");
  json out = target;
  out.merge_patch(patch);
  return out;
}

ApiResult<json> ApplyJsonPatch(const json& target, const json& patch) {
  if (!patch.is_array()) return BadRequestError("a JSON patch must be a JSON array of operations");
  try {
    return target.patch(patch);
  } catch (const json::exception& e) {
    ApiError err;
    err.code = 422;
    err.reason = "Invalid";
    std::string what = e.what();  // "[json.exception.<kind>.<id>] <message>"
    if (auto end = what.find("] "); what.rfind("[json.exception", 0) == 0 && end != std::string::npos) {
      what = what.substr(end + 2);
    }
    err.message = "the server rejected our request due to an error in our request: " + what;
    return err;
  }
}

ApiResult<json> ApplyStrategicMergePatch(const json& target, const json& patch) {
  if (!patch.is_object()) return BadRequestError("a strategic merge patch must be a JSON object");
  return StrategicMerge(target, patch);
}

}  // namespace septa::kubesim
