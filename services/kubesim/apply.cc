#include "services/kubesim/apply.h"

#include <map>
#include <set>
#include <vector>

#include "common/documents.h"
#include "services/kubesim/patches.h"

namespace septa::kubesim {

using nlohmann::json;

namespace {

using Path = std::vector<std::string>;  // FieldsV1 tokens: "f:spec", "k:{\"name\":\"c\"}"
using FieldSet = std::set<Path>;

struct Manager {
  std::string operation;  // "Apply" or "Update"
  std::string api_version;
  std::string time;
  FieldSet fields;
};
using Managers = std::map<std::string, Manager>;

bool Ignored(const Path& prefix, const std::string& key) {
  if (prefix.empty()) return key == "apiVersion" || key == "kind" || key == "status";
  if (prefix.size() == 1 && prefix[0] == "f:metadata") return key != "labels" && key != "annotations";
  return false;
}

void CollectLeaves(const json& v, Path& prefix, FieldSet& out) {
  if (v.is_object() && !v.empty()) {
    for (const auto& [k, child] : v.items()) {
      if (Ignored(prefix, k)) continue;
      prefix.push_back("f:" + k);
      std::string_view key = MergeKeyFor(k);
      if (child.is_array() && !key.empty()) {
        for (const auto& item : child) {
          if (!item.is_object() || !item.contains(key)) continue;
          prefix.push_back("k:" + json{{std::string(key), item[std::string(key)]}}.dump());
          CollectLeaves(item, prefix, out);
          prefix.pop_back();
        }
      } else {
        CollectLeaves(child, prefix, out);
      }
      prefix.pop_back();
    }
    return;
  }
  if (!prefix.empty()) out.insert(prefix);
}

FieldSet Leaves(const json& obj) {
  FieldSet out;
  Path prefix;
  CollectLeaves(obj, prefix, out);
  return out;
}

// Finds the child a token names: a field, or the list element whose key
// fields equal the token's.
json* FieldChild(json& node, const std::string& token) {
  if (token.rfind("f:", 0) == 0) {
    if (!node.is_object()) return nullptr;
    auto it = node.find(token.substr(2));
    return it == node.end() ? nullptr : &*it;
  }
  if (token.rfind("k:", 0) == 0 && node.is_array()) {
    auto parsed = ParseJson(std::string_view(token).substr(2));
    const json key = parsed.ok() ? *std::move(parsed) : json();
    for (auto& item : node) {
      bool match = item.is_object() && key.is_object();
      for (auto& [k, v] : key.items()) match = match && item.contains(k) && item[k] == v;
      if (match) return &item;
    }
  }
  return nullptr;
}

const json* Lookup(const json& root, const Path& path) {
  json* node = const_cast<json*>(&root);
  for (const auto& token : path) {
    node = FieldChild(*node, token);
    if (node == nullptr) return nullptr;
  }
  return node;
}

void Remove(json& root, const Path& path) {
  json* parent = &root;
  for (std::size_t i = 0; i + 1 < path.size(); ++i) {
    parent = FieldChild(*parent, path[i]);
    if (parent == nullptr) return;
  }
  const std::string& last = path.back();
  if (last.rfind("f:", 0) == 0 && parent->is_object()) {
    parent->erase(last.substr(2));
  } else if (json* element = FieldChild(*parent, last); element != nullptr && parent->is_array()) {
    parent->erase(parent->begin() + (element - &(*parent)[0]));
  }
}

json ToFieldsV1(const FieldSet& fields) {
  json root = json::object();
  for (const auto& path : fields) {
    json* node = &root;
    for (const auto& token : path) node = &(*node)[token];
    if (node->is_null()) *node = json::object();
  }
  return root;
}

void FromFieldsV1(const json& node, Path& prefix, FieldSet& out) {
  if (!node.is_object() || node.empty()) {
    if (!prefix.empty()) out.insert(prefix);
    return;
  }
  for (const auto& [token, child] : node.items()) {
    if (token == ".") continue;
    prefix.push_back(token);
    FromFieldsV1(child, prefix, out);
    prefix.pop_back();
  }
}

Managers ReadManagers(const json* obj) {
  Managers out;
  if (obj == nullptr) return out;
  auto md = obj->find("metadata");
  if (md == obj->end() || !md->contains("managedFields") || !(*md)["managedFields"].is_array()) return out;
  for (const auto& entry : (*md)["managedFields"]) {
    Manager m;
    m.operation = entry.value("operation", "Update");
    m.api_version = entry.value("apiVersion", "");
    m.time = entry.value("time", "");
    Path prefix;
    if (entry.contains("fieldsV1")) FromFieldsV1(entry["fieldsV1"], prefix, m.fields);
    out[entry.value("manager", "") + "\n" + m.operation] = std::move(m);
  }
  return out;
}

void WriteManagers(json& obj, const Managers& managers) {
  json list = json::array();
  for (const auto& [id, m] : managers) {
    if (m.fields.empty()) continue;
    list.push_back({{"manager", id.substr(0, id.find('\n'))},
                    {"operation", m.operation},
                    {"apiVersion", m.api_version},
                    {"time", m.time},
                    {"fieldsType", "FieldsV1"},
                    {"fieldsV1", ToFieldsV1(m.fields)}});
  }
  if (list.empty()) {
    obj["metadata"].erase("managedFields");
  } else {
    obj["metadata"]["managedFields"] = std::move(list);
  }
}

std::string DottedPath(const Path& path) {
  std::string out;
  for (const auto& t : path) {
    if (t.rfind("f:", 0) == 0) {
      out += "." + t.substr(2);
    } else {
      out += "[" + t.substr(2) + "]";
    }
  }
  return out;
}

}  // namespace

ApiResult<json> ServerSideApply(const ApplyRequest& req) {
  Managers managers = ReadManagers(req.current);
  const std::string self = req.manager + "\nApply";
  FieldSet intent_fields = Leaves(*req.intent);

  std::vector<std::pair<std::string, Path>> conflicts;
  if (req.current != nullptr) {
    for (const auto& path : intent_fields) {
      const json* now = Lookup(*req.current, path);
      const json* wanted = Lookup(*req.intent, path);
      if (now == nullptr || wanted == nullptr || *now == *wanted) continue;
      for (const auto& [id, m] : managers) {
        if (id != self && m.fields.count(path)) conflicts.emplace_back(id.substr(0, id.find('\n')), path);
      }
    }
  }
  if (!conflicts.empty() && !req.force) {
    ApiError err = ConflictError(req.resource, req.group, req.name, "");
    err.message = "Apply failed with " + std::to_string(conflicts.size()) + " conflict" +
                  (conflicts.size() == 1 ? "" : "s") + ": ";
    for (std::size_t i = 0; i < conflicts.size(); ++i) {
      err.message += (i ? "\n" : "") + std::string("conflict with \"") + conflicts[i].first +
                     "\": " + DottedPath(conflicts[i].second);
      err.causes.push_back(
          {"FieldManagerConflict", "conflict with \"" + conflicts[i].first + "\"", DottedPath(conflicts[i].second)});
    }
    return err;
  }
  for (auto& [id, m] : managers) {
    if (id == self) continue;
    for (const auto& [owner, path] : conflicts) m.fields.erase(path);
  }

  json result = req.current ? *req.current : json::object();
  if (auto prev = managers.find(self); prev != managers.end()) {
    for (const auto& path : prev->second.fields) {
      if (intent_fields.count(path)) continue;
      bool owned_by_other = false;
      for (const auto& [id, m] : managers) owned_by_other = owned_by_other || (id != self && m.fields.count(path));
      if (!owned_by_other) Remove(result, path);
    }
  }
  KUBESIM_ASSIGN_OR_RETURN(result, ApplyStrategicMergePatch(result, *req.intent));
  managers[self] = Manager{"Apply", req.api_version, req.now, std::move(intent_fields)};
  WriteManagers(result, managers);
  return result;
}

void RecordUpdate(const json* before, json& after, const std::string& manager, const std::string& api_version,
                  const std::string& now) {
  Managers managers = ReadManagers(before);
  FieldSet changed;
  for (const auto& path : Leaves(after)) {
    const json* old_value = before ? Lookup(*before, path) : nullptr;
    const json* new_value = Lookup(after, path);
    if (old_value == nullptr || *old_value != *new_value) changed.insert(path);
  }
  if (changed.empty()) {
    WriteManagers(after, managers);
    return;
  }
  const std::string self = manager + "\nUpdate";
  for (auto& [id, m] : managers) {
    if (id == self) continue;
    for (const auto& path : changed) m.fields.erase(path);
  }
  Manager& mine = managers[self];
  mine.operation = "Update";
  mine.api_version = api_version;
  mine.time = now;
  mine.fields.insert(changed.begin(), changed.end());
  WriteManagers(after, managers);
}

}  // namespace septa::kubesim
