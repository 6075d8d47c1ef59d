// core::Tx inside one libpqxx transaction. Internal to services/store; see
// PgStore for the transaction's life cycle.
#pragma once

#include <optional>
#include <pqxx/pqxx>

#include "services/core/store.h"
#include "services/store/pg_errors.h"

namespace septa::store {

// Prepares every statement PgTx uses on a new connection.
void PrepareStatements(pqxx::connection& connection);

class PgTx final : public core::Tx {
 public:
  // `single_read`: `tx` is an autocommit (non)transaction in which exactly
  // one statement sees a consistent snapshot; a second read ends the attempt
  // with needs_snapshot() so that the caller runs the body again in a real
  // snapshot transaction.
  PgTx(pqxx::transaction_base& tx, core::TxMode mode, bool single_read = false)
      : tx_(tx), mode_(mode), single_read_(single_read) {}

  // A database error that dooms the whole transaction (lost race, broken
  // connection) whatever the body made of it.
  const std::optional<TranslatedError>& fatal_error() const { return fatal_; }
  bool needs_snapshot() const { return needs_snapshot_; }

  Result<std::vector<core::TrustTier>> ListTrustTiers() override;
  Result<core::TrustTier> GetTrustTier(const std::string& name) override;

  Result<core::Tenant> GetTenant(const std::string& name) override;
  Result<std::vector<core::Tenant>> ListTenants(const core::TenantQuery& query) override;
  Status InsertTenant(const core::Tenant& tenant) override;
  Status UpdateTenant(const core::Tenant& tenant, std::int64_t expected_version) override;
  Status DeleteTenant(const std::string& name, std::int64_t expected_version) override;

  Status InsertToken(const core::ApiToken& token) override;
  Result<core::ApiToken> GetToken(const std::string& id) override;
  Result<std::vector<core::ApiToken>> ListTokens(const std::string& principal) override;
  Status RevokeToken(const std::string& id, TimePoint when) override;
  Status RevokeTokensOf(const std::string& principal, TimePoint when) override;
  Status CapTokenLifetimes(const std::string& principal, std::chrono::seconds max_lifetime) override;

  Status AppendAudit(const core::AuditRecord& record) override;
  Result<std::vector<core::AuditRecord>> ListAudit(const std::string& resource, int limit) override;

  Result<core::IdempotencyRecord> GetIdempotency(const std::string& principal, const std::string& key) override;
  Status InsertIdempotency(const core::IdempotencyRecord& record) override;
  Status DeleteIdempotency(const std::string& principal, const std::string& key) override;
  Result<int> DeleteIdempotencyBefore(TimePoint cutoff, int limit) override;

 private:
  // Runs `read` and turns any exception into a Status.
  template <typename T, typename F>
  Result<T> Read(F&& read);
  // Runs `write` (given the transaction) under a savepoint, so that a
  // failed write leaves the transaction usable; returns how many rows changed.
  template <typename F>
  Result<std::size_t> Write(F&& write);
  Status Failed(const std::exception& e);
  // After an UPDATE/DELETE guarded by version matched nothing: why.
  Status VersionMismatch(const std::string& name, std::int64_t expected_version);

  pqxx::transaction_base& tx_;
  core::TxMode mode_;
  bool single_read_;
  int reads_ = 0;
  bool needs_snapshot_ = false;
  std::optional<TranslatedError> fatal_;
};

}  // namespace septa::store
