#include "services/core/virtual_cluster_write.h"

namespace septa::core {

void StampNextVersion(const tenancy::VirtualCluster& current, tenancy::VirtualCluster& next, TimePoint now) {
  next.version = current.version + 1;
  next.update_time = now;
}

Status WriteVirtualCluster(Tx& tx, const tenancy::VirtualCluster& current, tenancy::VirtualCluster& next, TimePoint now,
                           const VirtualClusterChange* change) {
  StampNextVersion(current, next, now);
  SEPTA_RETURN_IF_ERROR(tx.VirtualClusters().Update(next, current.version));
  if (change == nullptr) return Status::Ok();
  return tx.Audit().Append(AuditRecord{0, now, change->principal, change->action,
                                       VirtualClusterResource(current.tenant, current.name), EtagOf(current.version),
                                       EtagOf(next.version), change->request_id, change->surface});
}

}  // namespace septa::core
