// The repositories of core::Tx on PostgreSQL, one per aggregate, each doing
// its statements through the transaction's PgWork. Each prepares its
// statements on every new connection (PrepareStatements in pg_tx.h).
#pragma once

#include <pqxx/pqxx>

#include "services/core/store.h"
#include "services/store/pg_work.h"

namespace septa::store {

class PgTrustTiers final : public core::TrustTierRepository {
 public:
  explicit PgTrustTiers(PgWork& work) : work_(work) {}
  static void Prepare(pqxx::connection& c);
  Result<std::vector<core::TrustTier>> List() override;
  Result<core::TrustTier> Get(const std::string& name) override;
  Status Insert(const core::TrustTier& tier) override;
  Status Update(const core::TrustTier& tier, std::int64_t expected_version) override;
  Status Delete(const std::string& name, std::int64_t expected_version) override;

 private:
  Status VersionMismatch(const std::string& name, std::int64_t expected_version);

  PgWork& work_;
};

class PgTenants final : public core::TenantRepository {
 public:
  explicit PgTenants(PgWork& work) : work_(work) {}
  static void Prepare(pqxx::connection& c);
  Result<core::Tenant> Get(const std::string& name) override;
  Result<std::vector<core::Tenant>> List(const core::TenantQuery& query) override;
  Status Insert(const core::Tenant& tenant) override;
  Status Update(const core::Tenant& tenant, std::int64_t expected_version) override;
  Status Delete(const std::string& name, std::int64_t expected_version) override;

 private:
  // After an UPDATE/DELETE guarded by version matched nothing: why.
  Status VersionMismatch(const std::string& name, std::int64_t expected_version);
  PgWork& work_;
};

class PgTenantMembers final : public core::TenantMemberRepository {
 public:
  explicit PgTenantMembers(PgWork& work) : work_(work) {}
  static void Prepare(pqxx::connection& c);
  Result<std::vector<core::TenantMember>> List(const std::string& tenant) override;
  Result<core::TenantMember> Get(const std::string& tenant, core::MemberKind kind, const std::string& name) override;
  Status Insert(const core::TenantMember& member) override;
  Status Update(const core::TenantMember& member, std::int64_t expected_version) override;
  Status Delete(const std::string& tenant, core::MemberKind kind, const std::string& name,
                std::int64_t expected_version) override;
  Result<std::vector<core::TenantMember>> ListFor(const std::string& user,
                                                  const std::vector<std::string>& groups) override;

 private:
  // After an UPDATE/DELETE guarded by version matched nothing: why.
  Status VersionMismatch(const std::string& tenant, core::MemberKind kind, const std::string& name,
                         std::int64_t expected_version);
  PgWork& work_;
};

class PgTokens final : public core::TokenRepository {
 public:
  explicit PgTokens(PgWork& work) : work_(work) {}
  static void Prepare(pqxx::connection& c);
  Status Insert(const core::ApiToken& token) override;
  Result<core::ApiToken> Get(const std::string& id) override;
  Result<std::vector<core::ApiToken>> List(const std::string& principal, core::TokenKind kind) override;
  Status Revoke(const std::string& id, TimePoint when) override;
  Status RevokeAllOf(const std::string& principal, TimePoint when) override;
  Status CapLifetimes(const std::string& principal, std::chrono::seconds max_lifetime) override;
  Result<int> CountLive(const std::string& principal, TimePoint now) override;
  Result<int> DeleteDead(TimePoint dead_before, int limit) override;

 private:
  PgWork& work_;
};

class PgPersonSessions final : public core::PersonSessionRepository {
 public:
  explicit PgPersonSessions(PgWork& work) : work_(work) {}
  static void Prepare(pqxx::connection& c);
  Status InsertSignIn(const core::PendingSignIn& sign_in) override;
  Result<core::PendingSignIn> TakeSignIn(const std::string& state_hash) override;
  Result<int> CountSignIns(TimePoint now) override;
  Result<int> CountSignInsFrom(const std::string& client, TimePoint now) override;
  Status Insert(const core::PersonSession& session) override;
  Result<core::PersonSession> Get(const std::string& id) override;
  Result<std::vector<core::PersonSession>> ListLive(const std::string& issuer, const std::string& user,
                                                    TimePoint now) override;
  Status UpdateIdentity(const core::PersonSession& session, std::int64_t expected_version) override;
  Status Revoke(const std::string& id, TimePoint when) override;
  Result<int> DeleteDead(TimePoint now, TimePoint dead_before, int limit) override;

 private:
  PgWork& work_;
};

class PgAuditLog final : public core::AuditLog {
 public:
  explicit PgAuditLog(PgWork& work) : work_(work) {}
  static void Prepare(pqxx::connection& c);
  Status Append(const core::AuditRecord& record) override;
  Result<std::vector<core::AuditRecord>> List(const std::string& resource, int limit) override;

 private:
  PgWork& work_;
};

class PgIdempotency final : public core::IdempotencyRepository {
 public:
  explicit PgIdempotency(PgWork& work) : work_(work) {}
  static void Prepare(pqxx::connection& c);
  Result<core::IdempotencyRecord> Get(const std::string& principal, const std::string& key) override;
  Status Insert(const core::IdempotencyRecord& record) override;
  Status Delete(const std::string& principal, const std::string& key) override;
  Result<int> DeleteBefore(TimePoint cutoff, int limit) override;

 private:
  PgWork& work_;
};

class PgCredentials final : public core::CredentialRepository {
 public:
  explicit PgCredentials(PgWork& work) : work_(work) {}
  static void Prepare(pqxx::connection& c);
  Status Insert(const core::VclusterCredential& credential) override;
  Result<core::VclusterCredential> Get(const std::string& tenant, const std::string& vcluster,
                                       const std::string& serial) override;
  Result<std::vector<core::VclusterCredential>> List(const core::CredentialQuery& query) override;
  Result<core::VclusterCredential> Revoke(const std::string& tenant, const std::string& vcluster,
                                          const std::string& serial, TimePoint when) override;

 private:
  PgWork& work_;
};

class PgApplySets final : public core::ApplySetRepository {
 public:
  explicit PgApplySets(PgWork& work) : work_(work) {}
  static void Prepare(pqxx::connection& c);
  Result<std::optional<core::ApplySet>> Get(const std::string& tenant, const std::string& name) override;
  Status Put(const core::ApplySet& set) override;
  Result<std::vector<core::ApplySet>> List(const std::string& tenant) override;
  Result<std::vector<core::ApplySet>> ListAll() override;
  Result<std::vector<core::ApplySetMember>> Members(const std::string& tenant, const std::string& name) override;
  Result<std::optional<core::ApplySetMember>> MemberOf(const std::string& kind, const std::string& resource) override;
  Status PutMembers(const std::vector<core::ApplySetMember>& members) override;
  Status DeleteMember(const std::string& kind, const std::string& resource) override;
  Status NoteDrift(const std::string& tenant, const std::string& name, std::string_view surface) override;

 private:
  PgWork& work_;
};

class PgTokenDeclarations final : public core::TokenDeclarationRepository {
 public:
  explicit PgTokenDeclarations(PgWork& work) : work_(work) {}
  static void Prepare(pqxx::connection& c);
  Result<std::optional<core::TokenDeclaration>> Get(const std::string& name) override;
  Status Insert(const core::TokenDeclaration& declaration) override;
  Status Update(const core::TokenDeclaration& declaration, std::int64_t expected_version) override;
  Status Delete(const std::string& name) override;
  Result<std::vector<core::TokenDeclaration>> List() override;

 private:
  PgWork& work_;
};

class PgUsage final : public core::UsageRepository {
 public:
  explicit PgUsage(PgWork& work) : work_(work) {}
  static void Prepare(pqxx::connection& c);
  Result<std::optional<TimePoint>> Cursor(const std::string& node) override;
  Status Record(const core::UsageScrapeBatch& batch) override;
  Result<std::vector<core::UsageIdleState>> IdleStates(const std::string& node) override;
  Result<std::vector<core::UsageIdleState>> AllIdleStates() override;
  Result<std::vector<core::UsageBucket>> Query(const core::UsageQuery& query) override;
  Result<std::vector<core::UsagePoolBucket>> QueryPool(const core::UsagePoolQuery& query) override;
  Result<std::vector<core::GpuPrice>> Prices() override;
  Status PutPrice(const core::GpuPrice& price) override;
  Result<int> DeleteMinutesBefore(TimePoint cutoff, int limit) override;

 private:
  PgWork& work_;
};

}  // namespace septa::store
