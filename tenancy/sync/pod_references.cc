#include "tenancy/sync/pod_references.h"

#include <string>

#include "tenancy/sync/bookkeeping.h"

namespace septa::tenancy::sync {
namespace {

using nlohmann::json;

enum class RefKind { kConfigMap, kSecret, kClaim, kEndpoints };

// object[ref][key] when it is a non-empty string, e.g. csi.nodePublishSecretRef.name.
template <typename Json>
Json* NameAt(Json& object, const char* ref, const char* key) {
  if (!object.is_object()) return nullptr;
  auto holder = object.find(ref);
  if (holder == object.end() || !holder->is_object()) return nullptr;
  auto name = holder->find(key);
  if (name == holder->end() || !name->is_string() || name->template get_ref<const std::string&>().empty())
    return nullptr;
  return &*name;
}

// Calls visit(kind, name, volume) for every name in `spec` that references
// a config map, secret or PVC of the pod's namespace; `volume` is the volume
// that holds it, or nullptr. Json: json or const json.
template <typename Json, typename Visit>
void ForEachReference(Json& spec, Visit&& visit) {
  auto at = [&visit](RefKind kind, Json* name, const json* volume) {
    if (name != nullptr) visit(kind, *name, volume);
  };
  auto volumes = spec.find("volumes");
  if (volumes != spec.end() && volumes->is_array()) {
    for (Json& volume : *volumes) {
      at(RefKind::kConfigMap, NameAt(volume, "configMap", "name"), &volume);
      at(RefKind::kSecret, NameAt(volume, "secret", "secretName"), &volume);
      at(RefKind::kClaim, NameAt(volume, "persistentVolumeClaim", "claimName"), &volume);
      // Every other name of an object in the pod's namespace that a volume
      // source of the Pod API holds: left as written, it would name the
      // host namespace's own objects (another pod's token Secret).
      for (const char* kind : {"iscsi", "rbd", "cephfs", "flexVolume", "scaleIO", "storageos"}) {
        if (volume.contains(kind)) at(RefKind::kSecret, NameAt(volume[kind], "secretRef", "name"), &volume);
      }
      if (volume.contains("csi")) at(RefKind::kSecret, NameAt(volume["csi"], "nodePublishSecretRef", "name"), &volume);
      at(RefKind::kSecret, NameAt(volume, "azureFile", "secretName"), &volume);
      // The Endpoints of a selector-less service, whose host copy leads to the tenant's own pods only.
      at(RefKind::kEndpoints, NameAt(volume, "glusterfs", "endpoints"), &volume);
      if (!volume.contains("projected") || !volume["projected"].contains("sources")) continue;
      for (Json& source : volume["projected"]["sources"]) {
        at(RefKind::kConfigMap, NameAt(source, "configMap", "name"), &volume);
        at(RefKind::kSecret, NameAt(source, "secret", "name"), &volume);
      }
    }
  }
  ForEachContainer(spec, [&at](std::string_view, std::size_t, Json& container) {
    if (container.contains("envFrom") && container["envFrom"].is_array()) {
      for (Json& from : container["envFrom"]) {
        at(RefKind::kConfigMap, NameAt(from, "configMapRef", "name"), nullptr);
        at(RefKind::kSecret, NameAt(from, "secretRef", "name"), nullptr);
      }
    }
    if (container.contains("env") && container["env"].is_array()) {
      for (Json& var : container["env"]) {
        if (!var.is_object() || !var.contains("valueFrom")) continue;
        at(RefKind::kConfigMap, NameAt(var["valueFrom"], "configMapKeyRef", "name"), nullptr);
        at(RefKind::kSecret, NameAt(var["valueFrom"], "secretKeyRef", "name"), nullptr);
      }
    }
  });
  auto pull_secrets = spec.find("imagePullSecrets");
  if (pull_secrets == spec.end() || !pull_secrets->is_array()) return;
  for (Json& secret : *pull_secrets) {
    auto name = secret.is_object() ? secret.find("name") : secret.end();
    if (name != secret.end() && name->is_string() && !name->template get_ref<const std::string&>().empty())
      visit(RefKind::kSecret, *name, nullptr);
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
  ForEachReference(
      spec, [&](RefKind, json& name, const json*) { name = HostObjectName(name.get<std::string>(), ns, vcluster); });
  auto volumes = spec.find("volumes");
  if (volumes == spec.end() || !volumes->is_array()) return;
  for (json& volume : *volumes) {
    if (!volume.is_object() || !volume.contains("ephemeral") || !volume.contains("name")) continue;
    // Kubernetes names the PVC of an ephemeral volume "<pod>-<volume>"; the
    // syncer copies that PVC down like any other.
    const std::string claim = EphemeralClaimName(pod_name, volume["name"].get<std::string>());
    volume.erase("ephemeral");
    volume["persistentVolumeClaim"] = {{"claimName", HostObjectName(claim, ns, vcluster)}};
  }
}

std::optional<Refusal> CheckUnrenamedSources(const json& spec) {
  const json volumes = spec.value("volumes", json::array());
  for (std::size_t i = 0; volumes.is_array() && i < volumes.size(); ++i) {
    const json sources = volumes[i].value("projected", json::object()).value("sources", json::array());
    for (std::size_t j = 0; sources.is_array() && j < sources.size(); ++j) {
      const std::string field = "spec.volumes[" + std::to_string(i) + "].projected.sources[" + std::to_string(j) + "]";
      if (sources[j].contains("clusterTrustBundle")) {
        return Refusal{field + ".clusterTrustBundle",
                       "a cluster trust bundle is a cluster-wide object: the host pod would read the host's"};
      }
      if (sources[j].contains("podCertificate")) {
        return Refusal{field + ".podCertificate",
                       "a pod certificate would be issued to the host pod's identity, not the virtual pod's"};
      }
    }
  }
  return std::nullopt;
}

bool IsLegacyTokenVolume(const json& spec, const json& volume) {
  const json* secret = NameAt(volume, "secret", "secretName");
  if (secret == nullptr || volume.value("name", "") != secret->get<std::string>()) return false;
  const std::string account = spec.value("serviceAccountName", spec.value("serviceAccount", "default"));
  if (!secret->get<std::string>().starts_with(account + "-token-")) return false;
  bool mounted = false;
  ForEachContainer(spec, [&](std::string_view, std::size_t, const json& container) {
    for (const json& mount : container.value("volumeMounts", json::array())) {
      mounted = mounted || (mount.value("name", "") == volume.value("name", "") &&
                            mount.value("mountPath", "") == kServiceAccountMountPath);
    }
  });
  return mounted;
}

std::set<ObjectRef> ReferencedObjects(const json& virtual_pod) {
  std::set<ObjectRef> out;
  if (!virtual_pod.is_object() || !virtual_pod.contains("spec") || !virtual_pod["spec"].is_object()) return out;
  const json& spec = virtual_pod["spec"];
  const std::string ns = virtual_pod.value("metadata", json::object()).value("namespace", "");
  ForEachReference(spec, [&](RefKind kind, const json& name, const json* volume) {
    if (kind != RefKind::kConfigMap && kind != RefKind::kSecret) return;
    if (volume != nullptr && IsLegacyTokenVolume(spec, *volume)) return;
    out.insert(
        {kind == RefKind::kConfigMap ? CopiedKind::kConfigMap : CopiedKind::kSecret, ns, name.get<std::string>()});
  });
  return out;
}

std::string EphemeralClaimName(std::string_view pod, std::string_view volume) {
  return std::string(pod) + "-" + std::string(volume);
}

std::set<std::string> ReferencedClaims(const json& virtual_pod) {
  std::set<std::string> out;
  if (!virtual_pod.is_object() || !virtual_pod.contains("spec") || !virtual_pod["spec"].is_object()) return out;
  const json& spec = virtual_pod["spec"];
  ForEachReference(spec, [&](RefKind kind, const json& name, const json*) {
    if (kind == RefKind::kClaim) out.insert(name.get<std::string>());
  });
  auto volumes = spec.find("volumes");
  if (volumes == spec.end() || !volumes->is_array()) return out;
  const std::string pod = MetadataField(virtual_pod, "name");
  for (const json& volume : *volumes) {
    if (volume.is_object() && volume.contains("ephemeral") && volume.value("name", json()).is_string()) {
      out.insert(EphemeralClaimName(pod, volume["name"].get<std::string>()));
    }
  }
  return out;
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
