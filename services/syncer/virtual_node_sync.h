// The virtual nodes of one watched virtual cluster, kept to those its pods
// are bound to, each showing what the tenant holds on that host node
// (tenancy/sync/virtual_nodes.h). Level-based: one pass lists the nodes the
// syncer wrote (kVirtualNodeLabel) and creates, updates or deletes until
// they are what the pods and the reservation say; a node someone else
// created under the same name is left alone. The host nodes are as the
// inventory in `store` last saw them.
#pragma once

#include "services/core/store.h"
#include "services/reconcile/controller.h"
#include "services/syncer/virtual_cluster_watches.h"

namespace septa::syncer {

reconcile::Outcome SyncVirtualNodes(WatchedCluster& cluster, core::Store& store);

}  // namespace septa::syncer
