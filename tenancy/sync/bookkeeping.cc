#include "tenancy/sync/bookkeeping.h"

#include <algorithm>
#include <vector>

#include "tenancy/host/names.h"
#include "tenancy/sync/host_keys.h"

namespace septa::tenancy::sync {
namespace {

std::string MetaString(const nlohmann::json& object, std::string_view key) {
  return StringField(object, "metadata", key);
}

}  // namespace

std::string StringField(const nlohmann::json& object, std::string_view section, std::string_view field) {
  const auto outer = object.find(section);
  if (outer == object.end() || !outer->is_object()) return "";
  const auto value = outer->find(field);
  return value != outer->end() && value->is_string() ? value->get<std::string>() : "";
}

std::string MetadataMapString(const nlohmann::json& object, std::string_view map, std::string_view key) {
  const auto meta = object.find("metadata");
  if (meta == object.end() || !meta->is_object()) return "";
  const auto entries = meta->find(map);
  if (entries == meta->end() || !entries->is_object()) return "";
  const auto value = entries->find(key);
  return value != entries->end() && value->is_string() ? value->get<std::string>() : "";
}

std::string JoinCopiedKeys(const std::set<std::string>& keys) {
  std::string out;
  for (const std::string& key : keys) out += (out.empty() ? "" : ",") + key;
  return out;
}

std::set<std::string> SplitCopiedKeys(std::string_view value) {
  std::set<std::string> out;
  std::size_t start = 0;
  while (start < value.size()) {
    const std::size_t end = std::min(value.find(',', start), value.size());
    if (end > start) out.emplace(value.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

nlohmann::json SpecOf(const nlohmann::json& object) {
  auto it = object.find("spec");
  return it != object.end() && it->is_object() ? *it : nlohmann::json::object();
}

nlohmann::json ComparedField(const nlohmann::json& object, std::string_view key) {
  auto it = object.find(key);
  if (it == object.end() || it->is_null() || (it->is_boolean() && !it->get<bool>()) ||
      (it->is_structured() && it->empty())) {
    return nullptr;
  }
  return *it;
}

bool LabelsAndAnnotationsEqual(const nlohmann::json& want, const nlohmann::json& host_object) {
  const nlohmann::json want_meta = want.value("metadata", nlohmann::json::object());
  const nlohmann::json host_meta = host_object.value("metadata", nlohmann::json::object());
  for (const char* map : {"labels", "annotations"}) {
    if (ComparedField(want_meta, map) != ComparedField(host_meta, map)) return false;
  }
  return true;
}

bool Deleting(const nlohmann::json& object) {
  auto md = object.find("metadata");
  return md != object.end() && md->is_object() && md->contains("deletionTimestamp") &&
         !(*md)["deletionTimestamp"].is_null();
}

std::string HostObjectName(std::string_view name, std::string_view ns, std::string_view vcluster) {
  return host::SafeConcat({name, "x", ns, "x", vcluster});
}

nlohmann::json HostMetadata(std::string_view kind, const nlohmann::json& virtual_meta, std::string_view tenant,
                            std::string_view vcluster, std::string_view host_namespace,
                            const std::set<std::string>& integrations,
                            const std::set<std::string, std::less<>>& dropped) {
  using nlohmann::json;
  const std::string name = virtual_meta.value("name", "");
  const std::string ns = virtual_meta.value("namespace", "");
  const std::string host_name = HostObjectName(name, ns, vcluster);
  json labels = json::object();
  std::set<std::string> label_keys;
  const json virtual_labels = virtual_meta.value("labels", json::object());
  for (const auto& [key, value] : virtual_labels.items()) {
    if (!CopiedToHost(key, value, integrations)) continue;
    labels[key] = value;
    label_keys.insert(key);
  }
  json annotations = json::object();
  std::set<std::string> annotation_keys;
  const json virtual_annotations = virtual_meta.value("annotations", json::object());
  for (const auto& [key, value] : virtual_annotations.items()) {
    if (dropped.contains(key) || !CopiedToHost(key, value, integrations)) continue;
    annotations[key] = value;
    annotation_keys.insert(key);
  }
  labels[std::string(kSyncedLabel)] = "true";
  labels[std::string(kTenantLabel)] = std::string(tenant);
  labels[std::string(kVclusterLabel)] = std::string(vcluster);
  labels[std::string(kVirtualNamespaceLabel)] = ns;
  annotations.update(json{{std::string(kVirtualNameAnnotation), name},
                          {std::string(kVirtualNamespaceAnnotation), ns},
                          {std::string(kVirtualUidAnnotation), virtual_meta.value("uid", "")},
                          {std::string(kVirtualKindAnnotation), std::string(kind)},
                          {std::string(kHostNameAnnotation), host_name},
                          {std::string(kHostNamespaceAnnotation), std::string(host_namespace)},
                          {std::string(kCopiedLabelsAnnotation), JoinCopiedKeys(label_keys)},
                          {std::string(kCopiedAnnotationsAnnotation), JoinCopiedKeys(annotation_keys)}});
  return {{"name", host_name},
          {"namespace", std::string(host_namespace)},
          {"labels", labels},
          {"annotations", annotations}};
}

std::optional<VirtualRef> VirtualRefOf(const nlohmann::json& host_object, std::string_view tenant,
                                       std::string_view vcluster) {
  if (MetadataMapString(host_object, "labels", kSyncedLabel) != "true" ||
      MetadataMapString(host_object, "labels", kTenantLabel) != tenant ||
      MetadataMapString(host_object, "labels", kVclusterLabel) != vcluster)
    return std::nullopt;
  if (MetadataMapString(host_object, "annotations", kHostNameAnnotation) != MetaString(host_object, "name") ||
      MetadataMapString(host_object, "annotations", kHostNamespaceAnnotation) != MetaString(host_object, "namespace"))
    return std::nullopt;
  VirtualRef ref{MetadataMapString(host_object, "annotations", kVirtualNamespaceAnnotation),
                 MetadataMapString(host_object, "annotations", kVirtualNameAnnotation),
                 MetadataMapString(host_object, "annotations", kVirtualUidAnnotation)};
  if (ref.ns.empty() || ref.name.empty() || ref.uid.empty()) return std::nullopt;
  return ref;
}

}  // namespace septa::tenancy::sync
