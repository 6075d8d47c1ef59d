// Names, labels and annotations by which the syncer maps a virtual
// cluster's objects onto its host namespace and back
// (../shared/docs/SYNCER-FACTS.md "Host names", "Bookkeeping").
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <string_view>

namespace septa::tenancy::sync {

// On every host object the syncer writes (labels): who it belongs to. The
// host informers select on kSyncedLabel; the provisioner's objects carry
// app.kubernetes.io/managed-by=septa instead, so the two never mix.
inline constexpr std::string_view kSyncedLabel = "septa.dev/synced";  // "true"
inline constexpr std::string_view kTenantLabel = "septa.dev/tenant";
inline constexpr std::string_view kVclusterLabel = "septa.dev/vcluster";
inline constexpr std::string_view kVirtualNamespaceLabel = "septa.dev/namespace";

// Annotations: the virtual object it was written from and where it was
// written, so the reverse mapping can be checked, not guessed.
inline constexpr std::string_view kVirtualNameAnnotation = "septa.dev/object-name";
inline constexpr std::string_view kVirtualNamespaceAnnotation = "septa.dev/object-namespace";
inline constexpr std::string_view kVirtualUidAnnotation = "septa.dev/object-uid";
inline constexpr std::string_view kVirtualKindAnnotation = "septa.dev/object-kind";
inline constexpr std::string_view kHostNameAnnotation = "septa.dev/host-name";
inline constexpr std::string_view kHostNamespaceAnnotation = "septa.dev/host-namespace";

// Pods only. The virtual values the downward API reads on the host (the
// host pod's own name, namespace, UID, labels and service account differ):
// kVirtualLabelsAnnotation holds the labels as a downwardAPI volume renders
// them (`key="value"` lines, sorted).
inline constexpr std::string_view kVirtualLabelsAnnotation = "septa.dev/object-labels";
inline constexpr std::string_view kVirtualServiceAccountAnnotation = "septa.dev/object-service-account";
// The virtual pod's ownerReferences (JSON), which the host pod does not carry.
inline constexpr std::string_view kOwnerReferencesAnnotation = "septa.dev/object-owner-references";
// The label keys, annotation keys and scheduling gates copied from the
// virtual pod (comma-separated, sorted), so that one deleted there is
// deleted on the host while what the host side added survives.
inline constexpr std::string_view kCopiedLabelsAnnotation = "septa.dev/copied-labels";
inline constexpr std::string_view kCopiedAnnotationsAnnotation = "septa.dev/copied-annotations";
inline constexpr std::string_view kCopiedGatesAnnotation = "septa.dev/copied-scheduling-gates";
// The value of those annotations, and back (empty items are skipped).
std::string JoinCopiedKeys(const std::set<std::string>& keys);
std::set<std::string> SplitCopiedKeys(std::string_view value);
// What the pod uses of the reservation (JSON of PodAssignment, AssignmentOf).
inline constexpr std::string_view kAssignmentAnnotation = "septa.dev/assignment";

// Inputs a tenant may set on a virtual pod (annotations): which of the held
// MIG profiles (isolated), and how much of a GPU (shared: a fraction such as
// "0.25", or MiB of GPU memory). Every other `septa.dev/` key is Septa's.
inline constexpr std::string_view kMigProfileAnnotation = "septa.dev/mig-profile";
inline constexpr std::string_view kGpuFractionAnnotation = "septa.dev/gpu-fraction";
inline constexpr std::string_view kGpuMemoryAnnotation = "septa.dev/gpu-memory-mib";

// Strings of objects as an API server returns them, "" when absent or not
// a string: <section>.<field> (such as metadata.name or status.phase), and
// metadata.<map>.<key> (a label or an annotation).
std::string StringField(const nlohmann::json& object, std::string_view section, std::string_view field);
std::string MetadataMapString(const nlohmann::json& object, std::string_view map, std::string_view key);
// metadata.<field> (name, namespace, uid, resourceVersion...): StringField's commonest use.
inline std::string MetadataField(const nlohmann::json& object, std::string_view field) {
  return StringField(object, "metadata", field);
}

// The object's spec, an empty object when it has none (or not an object).
nlohmann::json SpecOf(const nlohmann::json& object);

// A field of `object` as the syncer compares a copy with what it should
// hold: absent, null, false and an empty map or list are one value (null).
nlohmann::json ComparedField(const nlohmann::json& object, std::string_view key);

// Whether `want` (a copy as the syncer writes it) and `host_object` (as
// read back) carry the same labels and annotations, compared as
// ComparedField does (absent and empty alike).
bool LabelsAndAnnotationsEqual(const nlohmann::json& want, const nlohmann::json& host_object);

// Whether the object is being deleted (metadata.deletionTimestamp set).
bool Deleting(const nlohmann::json& object);

// The host name of the namespaced virtual object `name` in `ns` of virtual
// cluster `vcluster`: SafeConcat(name, "x", ns, "x", vcluster).
std::string HostObjectName(std::string_view name, std::string_view ns, std::string_view vcluster);

// The metadata of the host copy of the virtual object whose metadata is
// `virtual_meta` (of `kind`: "Pod", "ConfigMap", "Secret"), written as
// HostObjectName to `host_namespace`: its labels and annotations copied
// (less the annotation keys in `dropped`, and less every key that is the
// host's or an integration's not in `integrations`: host_keys.h
// CopiedToHost, which callers refuse with CheckTenantKeys before, so that
// this only makes sure), the septa.dev/ labels above, the object and host
// annotations and the copied-key lists. Every kind's bookkeeping is this
// one, so VirtualRefOf reads them all alike.
nlohmann::json HostMetadata(std::string_view kind, const nlohmann::json& virtual_meta, std::string_view tenant,
                            std::string_view vcluster, std::string_view host_namespace,
                            const std::set<std::string>& integrations,
                            const std::set<std::string, std::less<>>& dropped = {});

// The virtual object a host object was written from.
struct VirtualRef {
  std::string ns;
  std::string name;
  std::string uid;
  bool operator==(const VirtualRef&) const = default;
};

// Trusted only when the labels name this tenant and virtual cluster and the
// recorded host name and namespace are the object's own; nullopt otherwise.
std::optional<VirtualRef> VirtualRefOf(const nlohmann::json& host_object, std::string_view tenant,
                                       std::string_view vcluster);

}  // namespace septa::tenancy::sync
