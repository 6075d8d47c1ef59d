// A virtual object's copy on the host, as every kind the syncer copies
// whole handles it: the key its events enqueue, the keys of a namespace's
// copies, and its deletion.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>

#include "common/status.h"
#include "services/kube/client.h"
#include "services/kube/watch.h"

namespace septa::syncer {

// Deletes `host_copy` (of `resource`) with its UID as the precondition, so
// that an object made again under that name meanwhile is never deleted in
// its place; one already gone counts as deleted. Logged.
Status DeleteHostCopy(kube::Client& host, const kube::Resource& resource, const nlohmann::json& host_copy);

// ObjectKey(..., `resource`, ...) of the virtual object `host_copy` records
// (its labels name the virtual cluster); nullopt when it records none.
std::optional<std::string> KeyOfHostCopy(const nlohmann::json& host_copy, const kube::Resource& resource);

// Adds to `keys` ObjectKey(..., `resource`, ...) of each virtual object of
// this virtual cluster whose copy `copies` holds in `host_namespace`.
void AddHostCopyKeys(std::set<std::string>& keys, const kube::Informer& copies, const std::string& host_namespace,
                     const std::string& tenant, const std::string& vcluster, const kube::Resource& resource);

}  // namespace septa::syncer
