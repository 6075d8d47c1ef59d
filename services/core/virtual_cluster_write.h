// The one way a stored virtual cluster is changed (its creation and the
// deletion of its row aside), by use cases and controllers alike: the
// version and update time are set here, the write is conditional on the
// version read, and the audit record goes in the same transaction. Eight
// hand-written copies of these lines had drifted apart (the MIG layout
// controller's release of a reservation wrote no audit record).
#pragma once

#include <string>

#include "common/status.h"
#include "services/core/auth.h"
#include "services/core/store.h"
#include "tenancy/virtual_cluster.h"
#include "tenancy/virtual_cluster_ref.h"

namespace septa::core {

// Who changed a virtual cluster and what it did, for its audit record.
struct VirtualClusterChange {
  std::string principal;   // "tenant:acme", "admin", "system:provisioner"
  std::string action;      // "vcluster.update", "vcluster.sleep_release", ...
  std::string request_id;  // empty for a controller
  std::string surface = "system";

  static VirtualClusterChange By(const RequestContext& ctx, std::string action) {
    return {ctx.principal.ToString(), std::move(action), ctx.request_id, std::string(SurfaceName(ctx.surface))};
  }
};

// "tenants/acme/vclusters/train": an audit record's resource.
using tenancy::VirtualClusterResource;

// `next` as the version after `current` would be: version + 1, update_time
// `now`. WriteVirtualCluster does it; an answer that shows a change it
// does not store (a row deleted outright) does it alone.
void StampNextVersion(const tenancy::VirtualCluster& current, tenancy::VirtualCluster& next, TimePoint now);

// Writes `next` — `current`, as read in `tx`, with changes — stamped by
// StampNextVersion, only over current's version (kAborted when another
// write came between), and the audit record of `change`. A status write
// (what a controller observed: conditions, endpoint) passes nullptr and is
// not audited: every condition's transition would flood the audit log.
Status WriteVirtualCluster(Tx& tx, const tenancy::VirtualCluster& current, tenancy::VirtualCluster& next, TimePoint now,
                           const VirtualClusterChange* change);

}  // namespace septa::core
