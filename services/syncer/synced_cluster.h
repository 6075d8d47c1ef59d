// What the syncer reads of one virtual cluster from the store: its state
// (which decides whether its pods are synced at all) and the view the pure
// translation places its pods with (tenancy/sync/pod_translation.h).
#pragma once

#include <optional>
#include <string>

#include "common/status.h"
#include "services/core/store.h"
#include "tenancy/host/config.h"
#include "tenancy/sync/pod_translation.h"
#include "tenancy/virtual_cluster.h"

namespace septa::syncer {

struct SyncedCluster {
  // The row's state, but SLEEPING while its tenant is suspended.
  tenancy::VirtualClusterState state = tenancy::VirtualClusterState::kProvisioning;
  tenancy::sync::VirtualClusterView view;
};

// The row, its tenant's tier, its reservation (empty when it holds none) and
// the inventory nodes that reservation names, in one read-only transaction;
// the PSA level as the provisioner renders it (`render`). nullopt when the
// virtual cluster does not exist.
Result<std::optional<SyncedCluster>> LoadSyncedCluster(core::Store& store, const tenancy::host::RenderConfig& render,
                                                       const std::string& tenant, const std::string& vcluster);

}  // namespace septa::syncer
