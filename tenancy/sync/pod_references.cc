#include "tenancy/sync/pod_references.h"

#include <string>

#include "tenancy/sync/bookkeeping.h"

namespace septa::tenancy::sync {
namespace {

using nlohmann::json;

class Renamer {
 public:
  Renamer(std::string_view ns, std::string_view vcluster) : ns_(ns), vcluster_(vcluster) {}

  // object[key], when a non-empty string, becomes its host name.
  void Rename(json& object, const char* key) const {
    if (!object.is_object()) return;
    auto it = object.find(key);
    if (it == object.end() || !it->is_string() || it->get<std::string>().empty()) return;
    *it = HostObjectName(it->get<std::string>(), ns_, vcluster_);
  }
  // object[ref][key], e.g. csi.nodePublishSecretRef.name.
  void RenameIn(json& object, const char* ref, const char* key) const {
    if (!object.is_object()) return;
    auto it = object.find(ref);
    if (it != object.end()) Rename(*it, key);
  }

 private:
  std::string_view ns_;
  std::string_view vcluster_;
};

void RenameVolume(const Renamer& r, json& volume, std::string_view pod_name, std::string_view ns,
                  std::string_view vcluster) {
  r.RenameIn(volume, "configMap", "name");
  r.RenameIn(volume, "secret", "secretName");
  r.RenameIn(volume, "persistentVolumeClaim", "claimName");
  for (const char* kind : {"iscsi", "rbd", "cephfs"}) {
    if (volume.contains(kind)) r.RenameIn(volume[kind], "secretRef", "name");
  }
  if (volume.contains("csi")) r.RenameIn(volume["csi"], "nodePublishSecretRef", "name");
  if (volume.contains("projected") && volume["projected"].contains("sources")) {
    for (json& source : volume["projected"]["sources"]) {
      r.RenameIn(source, "configMap", "name");
      r.RenameIn(source, "secret", "name");
    }
  }
  if (volume.contains("ephemeral") && volume.contains("name")) {
    // Kubernetes names the PVC of an ephemeral volume "<pod>-<volume>"; the
    // syncer copies that PVC down like any other.
    const std::string claim = std::string(pod_name) + "-" + volume["name"].get<std::string>();
    volume.erase("ephemeral");
    volume["persistentVolumeClaim"] = {{"claimName", HostObjectName(claim, ns, vcluster)}};
  }
}

void RenameContainer(const Renamer& r, json& container) {
  if (container.contains("envFrom")) {
    for (json& from : container["envFrom"]) {
      r.RenameIn(from, "configMapRef", "name");
      r.RenameIn(from, "secretRef", "name");
    }
  }
  if (container.contains("env")) {
    for (json& var : container["env"]) {
      if (!var.contains("valueFrom")) continue;
      r.RenameIn(var["valueFrom"], "configMapKeyRef", "name");
      r.RenameIn(var["valueFrom"], "secretKeyRef", "name");
    }
  }
}

// The annotation a downward-API fieldRef path reads instead, or "".
std::string AnnotationFor(const std::string& path) {
  if (path == "metadata.name") return std::string(kVirtualNameAnnotation);
  if (path == "metadata.namespace") return std::string(kVirtualNamespaceAnnotation);
  if (path == "metadata.uid") return std::string(kVirtualUidAnnotation);
  if (path == "metadata.labels") return std::string(kVirtualLabelsAnnotation);
  if (path == "spec.serviceAccountName") return std::string(kVirtualServiceAccountAnnotation);
  return "";
}

void RewriteFieldRef(json& holder) {
  if (!holder.is_object() || !holder.contains("fieldRef")) return;
  json& ref = holder["fieldRef"];
  const std::string annotation = AnnotationFor(ref.value("fieldPath", ""));
  if (!annotation.empty()) ref["fieldPath"] = "metadata.annotations['" + annotation + "']";
}

// The items of a downwardAPI volume or projected source.
void RewriteDownwardItems(json& downward_api) {
  auto items = downward_api.find("items");
  if (items == downward_api.end() || !items->is_array()) return;
  for (json& item : *items) RewriteFieldRef(item);
}

}  // namespace

void RenameReferences(json& spec, std::string_view pod_name, std::string_view ns, std::string_view vcluster) {
  const Renamer r(ns, vcluster);
  if (spec.contains("volumes")) {
    for (json& volume : spec["volumes"]) RenameVolume(r, volume, pod_name, ns, vcluster);
  }
  ForEachContainer(spec, [&r](std::string_view, std::size_t, json& container) { RenameContainer(r, container); });
  if (spec.contains("imagePullSecrets")) {
    for (json& secret : spec["imagePullSecrets"]) r.Rename(secret, "name");
  }
}

std::string DownwardLabels(const json& labels) {
  std::string out;
  for (const auto& [key, value] : labels.items()) {
    std::string quoted;
    for (char c : value.is_string() ? value.get<std::string>() : value.dump()) {
      if (c == '"' || c == '\\') quoted += '\\';
      quoted += c;
    }
    out += (out.empty() ? "" : "\n") + key + "=\"" + quoted + "\"";
  }
  return out;
}

void RewriteDownwardApi(json& spec) {
  ForEachContainer(spec, [](std::string_view, std::size_t, json& container) {
    if (!container.contains("env")) return;
    for (json& var : container["env"]) {
      if (var.contains("valueFrom")) RewriteFieldRef(var["valueFrom"]);
    }
  });
  if (!spec.contains("volumes")) return;
  for (json& volume : spec["volumes"]) {
    if (volume.contains("downwardAPI")) RewriteDownwardItems(volume["downwardAPI"]);
    if (!volume.contains("projected") || !volume["projected"].contains("sources")) continue;
    for (json& source : volume["projected"]["sources"]) {
      if (source.contains("downwardAPI")) RewriteDownwardItems(source["downwardAPI"]);
    }
  }
}

}  // namespace septa::tenancy::sync
