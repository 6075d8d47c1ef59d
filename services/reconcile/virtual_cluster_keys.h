// The keys "<tenant>/<vcluster>" of every stored virtual cluster: what the
// provisioner and the syncer list at a resync (each adds what it finds
// elsewhere, so that orphans are found).
#pragma once

#include <set>
#include <string>

#include "common/status.h"
#include "services/core/store.h"

namespace septa::reconcile {

Result<std::set<std::string>> StoredVirtualClusterKeys(core::Store& store);

}  // namespace septa::reconcile
