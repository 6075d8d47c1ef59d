#include "services/core/tier_service.h"

#include "services/core/validation.h"

namespace septa::core {

Result<std::vector<TrustTier>> TrustTierService::List(const RequestContext&) {
  return TransactFor(store_, TxMode::kReadOnly, [&](Tx& tx) { return tx.TrustTiers().List(); });
}

Result<TrustTier> TrustTierService::Get(const RequestContext&, const std::string& name) {
  if (!CanNameTenantOrTier(name)) return NotFound("trust tier \"" + EscapeControlCharacters(name) + "\" not found");
  return TransactFor(store_, TxMode::kReadOnly, [&](Tx& tx) -> Result<TrustTier> {
    auto row = tx.TrustTiers().Get(name);
    if (IsNotFound(row)) return NotFound("trust tier \"" + name + "\" not found");
    return row;
  });
}

}  // namespace septa::core
