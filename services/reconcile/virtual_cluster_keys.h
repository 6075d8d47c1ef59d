// The virtual clusters of every stored row: what the provisioner and the
// syncer list at a resync (each adds what it finds elsewhere, so that
// orphans are found).
#pragma once

#include <set>

#include "common/status.h"
#include "services/core/store.h"
#include "tenancy/virtual_cluster_ref.h"

namespace septa::reconcile {

Result<std::set<tenancy::VirtualClusterRef>> StoredVirtualClusterKeys(core::Store& store);

}  // namespace septa::reconcile
