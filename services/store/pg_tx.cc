#include "services/store/pg_tx.h"

namespace septa::store {

void PrepareStatements(pqxx::connection& c) {
  PgTrustTiers::Prepare(c);
  PgTenants::Prepare(c);
  PgTenantMembers::Prepare(c);
  PgTokens::Prepare(c);
  PgPersonSessions::Prepare(c);
  PgAuditLog::Prepare(c);
  PgIdempotency::Prepare(c);
  PgVirtualClusters::Prepare(c);
  PgInventory::Prepare(c);
  PgReservations::Prepare(c);
  PgCredentials::Prepare(c);
  PgApplySets::Prepare(c);
  PgTokenDeclarations::Prepare(c);
  PgUsage::Prepare(c);
}

}  // namespace septa::store
