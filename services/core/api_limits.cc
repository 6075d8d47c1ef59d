#include "services/core/api_limits.h"

namespace septa::core {

Result<tenancy::ApiLimits> EffectiveApiLimitsOf(Store& store, const std::string& tenant, const std::string& vcluster) {
  tenancy::ApiLimits limits;
  Status st = store.Transact(TxMode::kReadOnly, [&](Tx& tx) -> Status {
    auto vc = tx.VirtualClusters().Get(tenant, vcluster);
    SEPTA_RETURN_IF_ERROR(vc);
    auto owner = tx.Tenants().Get(tenant);
    SEPTA_RETURN_IF_ERROR(owner);
    auto tier = tx.TrustTiers().Get(owner->trust_tier);
    SEPTA_RETURN_IF_ERROR(tier);
    limits = tenancy::EffectiveApiLimits(tier->api_limits, vc->api_limits);
    return Status::Ok();
  });
  if (!st.ok()) return st;
  return limits;
}

}  // namespace septa::core
