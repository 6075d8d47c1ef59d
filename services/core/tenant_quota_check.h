// Tenant quotas (tenancy/quota.h) enforced where virtual clusters are
// created and resized: in the reserving transaction, on the rows it sees.
#pragma once

#include <string>

#include "common/status.h"
#include "gpu/catalog.h"
#include "services/core/model.h"
#include "services/core/store.h"
#include "tenancy/quota.h"
#include "tenancy/virtual_cluster.h"

namespace septa::core {

// What `tenant`'s virtual clusters count against its quota, as `tx` sees
// them, leaving out the one named `except` (empty: none). A virtual cluster
// counts its reservation's GPU-equivalents (on the inventory nodes its rows
// name), or its capacity's when it holds none; DELETING ones count too:
// their capacity is held until it is released. `with_gpus` false leaves
// gpu_milli 0 and reads no reservation.
Result<tenancy::TenantUsage> ReadTenantUsage(Tx& tx, const gpu::Catalog& catalog, const std::string& tenant,
                                             const std::string& except = "", bool with_gpus = true);

// Whether `requested` — a new virtual cluster (`previous` nullptr) or the
// next state of `previous` — fits its tenant's quota: tenancy::CheckTenantQuota
// over the tenant's other virtual clusters. A tenant without a quota costs
// nothing; reservations and nodes are read only when the quota bounds
// GPU-equivalents and the capacity is new or changes.
//
// Called before anything is placed, in the SERIALIZABLE transaction that
// writes the virtual cluster, so a refusal leaves nothing written. That is
// what keeps two concurrent creators or resizers (on one septad or on two)
// from both passing: each has read the other's rows (the tenant's virtual
// clusters and reservations), so PostgreSQL aborts one of them with a
// serialization failure and Store::Transact runs it again, when it sees the
// winner's rows and is refused. No lock is needed; a quota an admin lowers
// meanwhile is as if lowered just after the create.
Status EnforceTenantQuota(Tx& tx, const gpu::Catalog& catalog, const Tenant& tenant,
                          const tenancy::VirtualCluster& requested, const tenancy::VirtualCluster* previous,
                          const tenancy::Reservation* previous_reservation);

}  // namespace septa::core
