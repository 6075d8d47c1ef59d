// Inside a pod spec on its way down: the references to the virtual
// cluster's config maps, secrets and PVCs renamed to their host copies, and
// the downward API pointed at the annotations that hold the virtual values
// (../shared/docs/SYNCER-FACTS.md "What changes in a pod on the way down").
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace septa::tenancy::sync {

// Renames, in `spec` of virtual pod `pod_name` in `ns`: volumes (configMap,
// secret, persistentVolumeClaim, projected sources, CSI/iSCSI/RBD/CephFS
// secretRefs; an ephemeral volume becomes a reference to the PVC Kubernetes
// created for it, "<pod>-<volume>"), envFrom, env[].valueFrom and
// imagePullSecrets of every container list.
void RenameReferences(nlohmann::json& spec, std::string_view pod_name, std::string_view ns, std::string_view vcluster);

// fieldRefs to metadata.name|namespace|uid|labels and spec.serviceAccountName
// (env and downwardAPI volumes, projected or not) read the annotations that
// hold the virtual pod's values instead of the host pod's.
void RewriteDownwardApi(nlohmann::json& spec);

// The value of kVirtualLabelsAnnotation: `labels` as a downwardAPI volume
// renders metadata.labels (`key="value"` lines, sorted by key).
std::string DownwardLabels(const nlohmann::json& labels);

// Calls `visit(list, index, container)` for containers, initContainers and
// ephemeralContainers, in that order; `list` is the spec's key.
template <typename Visit>
void ForEachContainer(nlohmann::json& spec, Visit&& visit) {
  for (const char* list : {"containers", "initContainers", "ephemeralContainers"}) {
    auto it = spec.find(list);
    if (it == spec.end() || !it->is_array()) continue;
    for (std::size_t i = 0; i < it->size(); ++i) visit(std::string_view(list), i, (*it)[i]);
  }
}
template <typename Visit>
void ForEachContainer(const nlohmann::json& spec, Visit&& visit) {
  for (const char* list : {"containers", "initContainers", "ephemeralContainers"}) {
    auto it = spec.find(list);
    if (it == spec.end() || !it->is_array()) continue;
    for (std::size_t i = 0; i < it->size(); ++i) visit(std::string_view(list), i, (*it)[i]);
  }
}

}  // namespace septa::tenancy::sync
