#include "services/kubesim/patches.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <map>

#include "common/documents.h"
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
  // The API server's own bounds (common/documents.h): bodies come from
  // tenants, and the tree is copied, dumped and merged recursively.
  auto as_json = ParseJson(text);
  if (as_json.ok()) return *std::move(as_json);
  // JSON refused for a bound or a bad value is not tried again as YAML
  // (which would refuse it too, after reading it once more).
  if (!IsMalformedDocument(as_json.status())) return BadRequestError("json parse error: " + as_json.status().message());
  auto as_yaml = ParseYaml(text);
  if (!as_yaml.ok()) {
    // A body that opens as JSON was meant as JSON: say what is wrong with it as such.
    const std::size_t first = text.find_first_not_of(" \t\r\n");
    const bool json_like = first != std::string_view::npos && (text[first] == '{' || text[first] == '[');
    return BadRequestError(json_like ? "json parse error: " + as_json.status().message()
                                     : "error converting YAML to JSON: " + as_yaml.status().message());
  }
  try {
    return base::YamlToJson(*as_yaml);
  } catch (const YAML::Exception& e) {  // e.g. a map key that is itself a map
    return BadRequestError("error converting YAML to JSON: " + e.msg);
  }
}

ApiResult<json> ApplyMergePatch(const json& target, const json& patch) {
  if (!patch.is_object()) return BadRequestError("a merge patch must be a JSON object");
  json out = target;
  out.merge_patch(patch);
  return out;
}

namespace {

// kube-apiserver's bounds on a JSON patch (maxJSONPatchOperations and
// JSONPatchMaxCopyBytes): 'copy' can double a document per operation.
constexpr std::size_t kMaxJsonPatchOperations = 10000;
constexpr std::size_t kMaxJsonPatchCopyBytes = 3 * 1024 * 1024;

ApiError PatchInvalid(std::string what) {
  ApiError err;
  err.code = 422;
  err.reason = "Invalid";
  err.message = "the server rejected our request due to an error in our request: " + std::move(what);
  return err;
}

// How deep the object may be after `op`: the depth the value it puts lands
// at, or what it was. An upper bound; checked exactly only when it is over.
std::size_t DepthAfter(const json& op, const json& target, std::size_t depth) {
  const std::string op_name = op.value("op", "");
  const json* value = nullptr;
  if ((op_name == "add" || op_name == "replace") && op.contains("value")) value = &op["value"];
  if ((op_name == "copy" || op_name == "move") && op.contains("from") && op["from"].is_string()) {
    const json::json_pointer from(op["from"].get<std::string>());
    if (target.contains(from)) value = &target.at(from);
  }
  if (value == nullptr || !op.contains("path") || !op["path"].is_string()) return depth;
  const std::string& path = op["path"].get_ref<const std::string&>();
  const std::size_t at = static_cast<std::size_t>(std::count(path.begin(), path.end(), '/'));
  return std::max(depth, at + JsonDepth(*value));
}

}  // namespace

ApiResult<json> ApplyJsonPatch(const json& target, const json& patch) {
  if (!patch.is_array()) return BadRequestError("a JSON patch must be a JSON array of operations");
  if (patch.size() > kMaxJsonPatchOperations) {
    ApiError err;
    err.code = 413;
    err.reason = "RequestEntityTooLarge";
    err.message = "The allowed maximum operations in a JSON patch is " + std::to_string(kMaxJsonPatchOperations) +
                  ", got " + std::to_string(patch.size());
    return err;
  }
  // One operation at a time, so that no step can build what the API server
  // could not hold: copies add up to a bound, and the object stays within
  // the document depth (an 'add' of a deep value at a deep path nests both).
  json out = target;
  std::size_t depth = JsonDepth(out);
  std::size_t copied = 0;
  try {
    for (const json& op : patch) {
      if (op.is_object() && op.value("op", "") == "copy" && op.contains("from") && op["from"].is_string()) {
        const json::json_pointer from(op["from"].get<std::string>());
        if (out.contains(from)) copied += out.at(from).dump().size();
        if (copied > kMaxJsonPatchCopyBytes) {
          return PatchInvalid("Unable to copy, the accumulated size increase of copy is " + std::to_string(copied) +
                              ", exceeding the limit " + std::to_string(kMaxJsonPatchCopyBytes));
        }
      }
      const std::size_t bound = op.is_object() ? DepthAfter(op, out, depth) : depth;
      out.patch_inplace(json::array({op}));
      depth = bound > kMaxDocumentDepth ? JsonDepth(out) : bound;
      if (depth > kMaxDocumentDepth) {
        return PatchInvalid("the patched object nests deeper than " + std::to_string(kMaxDocumentDepth) + " levels");
      }
    }
  } catch (const json::exception& e) {
    std::string what = e.what();  // "[json.exception.<kind>.<id>] <message>"
    if (auto end = what.find("] "); what.rfind("[json.exception", 0) == 0 && end != std::string::npos) {
      what = what.substr(end + 2);
    }
    return PatchInvalid(what);
  }
  return out;
}

ApiResult<json> ApplyStrategicMergePatch(const json& target, const json& patch) {
  if (!patch.is_object()) return BadRequestError("a strategic merge patch must be a JSON object");
  return StrategicMerge(target, patch);
}

}  // namespace septa::kubesim
