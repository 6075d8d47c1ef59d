#include "services/reconcile/virtual_cluster_keys.h"

namespace septa::reconcile {

Result<std::set<tenancy::VirtualClusterRef>> StoredVirtualClusterKeys(core::Store& store) {
  std::set<tenancy::VirtualClusterRef> keys;
  Status st = store.Transact(core::TxMode::kReadOnly, [&](core::Tx& tx) -> Status {
    keys.clear();  // a retried transaction starts over
    core::VirtualClusterQuery query;
    query.limit = 500;
    while (true) {
      auto page = tx.VirtualClusters().List(query);
      SEPTA_RETURN_IF_ERROR(page);
      for (const auto& vc : *page) keys.insert({vc.tenant, vc.name});
      if (page->size() < static_cast<std::size_t>(query.limit)) return Status::Ok();
      query.after_tenant = page->back().tenant;
      query.after_name = page->back().name;
    }
  });
  if (!st.ok()) return st;
  return keys;
}

}  // namespace septa::reconcile
