// The config maps and secrets of a virtual cluster that its synced pods use,
// as the syncer copies them to its host namespace (../shared/docs/
// SYNCER-FACTS.md "What a virtual cluster gets from the host": config maps
// and secrets used by pods). Which ones: ReferencedObjects
// (pod_references.h), the same walk that renames the pods' references, so a
// renamed reference and its copy agree by construction.
#pragma once

#include <nlohmann/json.hpp>
#include <string_view>

#include "common/status.h"
#include "tenancy/sync/pod_references.h"
#include "tenancy/sync/pod_translation.h"

namespace septa::tenancy::sync {

// "ConfigMap" | "Secret": the kind as Kubernetes and the bookkeeping name it.
std::string_view KindName(CopiedKind kind);

// The host copy of `virtual_object` (a ConfigMap or Secret of `vcluster`):
// named HostObjectName in the host namespace, the bookkeeping of every
// synced object (HostMetadata: labels and annotations copied, less
// kubectl's last-applied-configuration, which would repeat the content),
// and data, binaryData, type and immutable as they are. An object without a
// name, namespace or UID is an error that names the field.
Result<nlohmann::json> HostCopy(CopiedKind kind, const VirtualClusterView& vcluster,
                                const nlohmann::json& virtual_object);

// Whether `host_copy` as read from the host holds what `want` (a HostCopy)
// says: labels, annotations and content equal (an absent map and an empty
// one are equal; what the API server adds to metadata is not compared).
bool CopyUpToDate(const nlohmann::json& want, const nlohmann::json& host_copy);

}  // namespace septa::tenancy::sync
