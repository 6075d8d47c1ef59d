// Deleting a host copy the syncer wrote, the one way every kind does it.
#pragma once

#include <nlohmann/json.hpp>

#include "common/status.h"
#include "services/kube/client.h"

namespace septa::syncer {

// Deletes `host_copy` (of `resource`) with its UID as the precondition, so
// that an object made again under that name meanwhile is never deleted in
// its place; one already gone counts as deleted. Logged.
Status DeleteHostCopy(kube::Client& host, const kube::Resource& resource, const nlohmann::json& host_copy);

}  // namespace septa::syncer
