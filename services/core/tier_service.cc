#include "services/core/tier_service.h"

#include "services/core/validation.h"

namespace septa::core {

Result<std::vector<TrustTier>> TrustTierService::List(const RequestContext&) {
  std::vector<TrustTier> tiers;
  Status st = store_.Transact(TxMode::kReadOnly, [&](Tx& tx) -> Status {
    auto rows = tx.TrustTiers().List();
    SEPTA_RETURN_IF_ERROR(rows);
    tiers = *std::move(rows);
    return Status::Ok();
  });
  if (!st.ok()) return st;
  return tiers;
}

Result<TrustTier> TrustTierService::Get(const RequestContext&, const std::string& name) {
  if (!CanNameTenantOrTier(name)) return NotFound("trust tier \"" + EscapeControlCharacters(name) + "\" not found");
  TrustTier tier;
  Status st = store_.Transact(TxMode::kReadOnly, [&](Tx& tx) -> Status {
    auto row = tx.TrustTiers().Get(name);
    if (!row.ok() && row.status().code() == Code::kNotFound) {
      return NotFound("trust tier \"" + name + "\" not found");
    }
    SEPTA_RETURN_IF_ERROR(row);
    tier = *std::move(row);
    return Status::Ok();
  });
  if (!st.ok()) return st;
  return tier;
}

}  // namespace septa::core
