// The kinds of host objects the provisioner keeps (tenancy/host/render.h),
// as API resources, and how an object found on the host leads back to the
// virtual cluster it belongs to.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "services/kube/client.h"
#include "tenancy/host/config.h"
#include "tenancy/virtual_cluster_ref.h"

namespace septa::reconcile {

struct HostKind {
  std::string kind;  // "ResourceQuota"
  kube::Resource resource;
};

// Every kind a virtual cluster may own with `scheduler`, in apply order.
const std::vector<HostKind>& ManagedHostKinds(tenancy::host::Scheduler scheduler);
// The resource of a rendered object's apiVersion and kind; std::nullopt for
// a kind the provisioner does not render.
std::optional<kube::Resource> ResourceOfKind(const std::string& api_version, const std::string& kind);

// The virtual cluster of the object's Septa labels; nullopt for an object of
// nobody (shared objects, objects not managed by Septa).
std::optional<tenancy::VirtualClusterRef> VClusterKeyOf(const nlohmann::json& object);

// The label selector of one virtual cluster's objects.
std::string VClusterSelector(const std::string& tenant, const std::string& vcluster);

// True when every field `desired` sets has that value in `live` (objects
// member by member, lists of the same length element by element, anything
// else by equality): applying `desired` would change nothing, so the
// provisioner does not write.
bool Covers(const nlohmann::json& live, const nlohmann::json& desired);

// True when server-side applying `desired` as `field_manager` would change
// nothing on `live`: it Covers `desired`, and `live` has no field that the
// manager applied before and `desired` no longer sets (apply would remove
// it: a quota lowered to "no limit" drops its `pods`). Ownership is read
// from live's metadata.managedFields (FieldsV1, operation Apply).
bool UpToDate(const nlohmann::json& live, const nlohmann::json& desired, const std::string& field_manager);

// True when `after` differs from `before` in more than what the host's own
// controllers write (status, resourceVersion, managedFields): Septa renders
// none of those, so an informer update that changes only them (a quota's
// usage, a StatefulSet's ready replicas) is no reason to reconcile.
bool ChangedBeyondStatus(const nlohmann::json& before, const nlohmann::json& after);

}  // namespace septa::reconcile
