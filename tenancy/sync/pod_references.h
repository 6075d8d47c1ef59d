// Inside a pod spec on its way down: the references to the virtual
// cluster's config maps, secrets and PVCs renamed to their host copies, and
// the downward API pointed at the annotations that hold the virtual values
// (../shared/docs/SYNCER-FACTS.md "What changes in a pod on the way down").
#pragma once

#include <compare>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <string_view>

#include "tenancy/sync/pod_translation.h"

namespace septa::tenancy::sync {

// Where Kubernetes mounts a pod's service account token.
inline constexpr std::string_view kServiceAccountMountPath = "/var/run/secrets/kubernetes.io/serviceaccount";

// The virtual objects the syncer copies down for the pods that use them.
enum class CopiedKind { kConfigMap, kSecret };

// A config map or secret of a virtual cluster.
struct ObjectRef {
  CopiedKind kind = CopiedKind::kConfigMap;
  std::string ns;
  std::string name;
  auto operator<=>(const ObjectRef&) const = default;
};

// Renames, in `spec` of virtual pod `pod_name` in `ns`, every name of an
// object of the pod's namespace the Pod API holds: volumes (configMap,
// secret, persistentVolumeClaim, projected configMap and secret sources,
// the secrets of csi, iscsi, rbd, cephfs, flexVolume, scaleIO, storageos
// and azureFile, glusterfs' Endpoints; an ephemeral volume becomes a
// reference to the PVC Kubernetes created for it, "<pod>-<volume>"),
// envFrom, env[].valueFrom and imagePullSecrets of every container list.
void RenameReferences(nlohmann::json& spec, std::string_view pod_name, std::string_view ns, std::string_view vcluster);

// The projected sources no rename can point into the virtual cluster:
// clusterTrustBundle (a cluster-scoped object, the host's) and
// podCertificate (issued to the host pod's identity). Refused, naming the source.
std::optional<Refusal> CheckUnrenamedSources(const nlohmann::json& spec);

// The config maps and secrets `virtual_pod` references, read at exactly the
// places RenameReferences renames (one walk serves both), so every renamed
// reference names the host copy of one of them. Left out: the secret
// volume older Kubernetes' ServiceAccount admission added for the service
// account's token (IsLegacyTokenVolume), which the host pod mounts from the
// syncer's token Secret instead: a service-account-token secret is copied
// only when a pod names it itself.
std::set<ObjectRef> ReferencedObjects(const nlohmann::json& virtual_pod);

// The claims `virtual_pod` uses, by name in its namespace: its
// persistentVolumeClaim volumes and, for each ephemeral volume, the claim
// Kubernetes creates for it (EphemeralClaimName), read by the walk that
// RenameReferences renames them with.
std::set<std::string> ReferencedClaims(const nlohmann::json& virtual_pod);

// The claim Kubernetes creates for ephemeral volume `volume` of pod `pod`: "<pod>-<volume>".
std::string EphemeralClaimName(std::string_view pod, std::string_view volume);

// Whether `volume` of pod spec `spec` is that admission's: a secret volume
// of the secret's own name "<serviceAccountName>-token-..." that a container
// mounts at kServiceAccountMountPath.
bool IsLegacyTokenVolume(const nlohmann::json& spec, const nlohmann::json& volume);

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
