#include "services/core/host_namespaces.h"

#include "services/core/store.h"

#include "tenancy/host/names.h"

namespace septa::core {

HostNamespaceOf StoredHostNamespaces(Store& store) {
  return [&store](const VirtualClusterKey& key) -> Result<std::string> {
    std::string stored;
    Status st = store.Transact(TxMode::kReadOnly, [&](Tx& tx) -> Status {
      stored.clear();
      auto vc = tx.VirtualClusters().Get(key.tenant, key.vcluster);
      if (vc.ok()) stored = vc->host_namespace;
      return vc.ok() || IsNotFound(vc) ? Status::Ok() : vc.status();
    });
    SEPTA_RETURN_IF_ERROR(st);
    if (stored.empty()) return tenancy::host::HostNamespaceName(key.tenant, key.vcluster);
    return stored;
  };
}

}  // namespace septa::core
