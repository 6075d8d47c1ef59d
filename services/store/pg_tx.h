// core::Tx inside one libpqxx transaction: the repositories of each
// aggregate (pg_repositories.h) over one PgWork. Internal to services/store;
// see PgStore for the transaction's life cycle.
#pragma once

#include <optional>
#include <pqxx/pqxx>

#include "services/core/store.h"
#include "services/store/pg_capacity.h"
#include "services/store/pg_repositories.h"
#include "services/store/pg_work.h"

namespace septa::store {

// Prepares every statement the repositories use on a new connection.
void PrepareStatements(pqxx::connection& connection);

class PgTx final : public core::Tx {
 public:
  // `single_read`: see PgWork.
  PgTx(pqxx::transaction_base& tx, core::TxMode mode, bool single_read = false) : work_(tx, mode, single_read) {}

  const std::optional<TranslatedError>& fatal_error() const { return work_.fatal_error(); }
  bool needs_snapshot() const { return work_.needs_snapshot(); }

  core::TrustTierRepository& TrustTiers() override { return tiers_; }
  core::TenantRepository& Tenants() override { return tenants_; }
  core::TenantMemberRepository& TenantMembers() override { return tenant_members_; }
  core::TokenRepository& Tokens() override { return tokens_; }
  core::PersonSessionRepository& PersonSessions() override { return person_sessions_; }
  core::AuditLog& Audit() override { return audit_; }
  core::IdempotencyRepository& Idempotency() override { return idempotency_; }
  core::VirtualClusterRepository& VirtualClusters() override { return vclusters_; }
  core::InventoryRepository& Inventory() override { return inventory_; }
  core::ReservationRepository& Reservations() override { return reservations_; }
  core::CredentialRepository& Credentials() override { return credentials_; }
  core::ApplySetRepository& ApplySets() override { return apply_sets_; }
  core::TokenDeclarationRepository& TokenDeclarations() override { return token_declarations_; }
  core::UsageRepository& Usage() override { return usage_; }

 private:
  PgWork work_;
  PgTrustTiers tiers_{work_};
  PgTenants tenants_{work_};
  PgTenantMembers tenant_members_{work_};
  PgTokens tokens_{work_};
  PgPersonSessions person_sessions_{work_};
  PgAuditLog audit_{work_};
  PgIdempotency idempotency_{work_};
  PgVirtualClusters vclusters_{work_};
  PgInventory inventory_{work_};
  PgReservations reservations_{work_};
  PgCredentials credentials_{work_};
  PgApplySets apply_sets_{work_};
  PgTokenDeclarations token_declarations_{work_};
  PgUsage usage_{work_};
};

}  // namespace septa::store
