#include "tests/support/fake_store.h"
#include "tests/support/fake_apply_sets.h"
#include "tests/support/fake_capacity.h"
#include "tests/support/fake_credentials.h"
#include "tests/support/fake_person_sessions.h"
#include "tests/support/fake_tenant_members.h"
#include "tests/support/fake_token_declarations.h"
#include "tests/support/fake_usage.h"
#include "tests/support/fake_work.h"

#include "services/core/auth.h"

#include <algorithm>
#include <regex>
#include <set>

namespace septa::core {
namespace {

// The CHECK constraints of migrations/0001_init.sql and 0005_tenant_quota.sql, with PgStore's field names.
Status CheckTenantRow(const Tenant& t) {
  if (!IsDnsLabel(t.name, 40)) {
    return InvalidField("name",
                        "must be a DNS-1123 label of 1-40 characters: lower-case letters, digits and '-', "
                        "starting and ending with a letter or digit");
  }
  if (t.version <= 0) return InvalidField("version", "must be positive");
  // migrations/0005_tenant_quota.sql
  const std::pair<const char*, const std::optional<std::int64_t>&> quota[] = {{"quota.gpu_milli", t.quota.gpu_milli},
                                                                              {"quota.cpu_milli", t.quota.cpu_milli},
                                                                              {"quota.memory_mib", t.quota.memory_mib},
                                                                              {"quota.pods", t.quota.pods},
                                                                              {"quota.vclusters", t.quota.vclusters}};
  for (const auto& [field, limit] : quota) {
    if (limit && *limit < 0) return InvalidField(field, "must not be negative");
  }
  return Status::Ok();
}

Status CheckTierReference(const FakeStore::State& state, const Tenant& t) {
  if (!state.tiers.count(t.trust_tier)) return InvalidField("trust_tier", "no such trust tier");
  return Status::Ok();
}

Status CheckTokenRow(const ApiToken& t) {
  static const std::regex kId("^[0-9a-f]{8,64}$");
  static const std::regex kPrincipal("^tenant:[a-z0-9]([-a-z0-9]*[a-z0-9])?$");
  static const std::regex kSha256("^[0-9a-f]{64}$");
  if (!std::regex_match(t.id, kId)) return InvalidField("id", "must be 8-64 lower-case hex digits");
  if (t.principal != "admin" && !std::regex_match(t.principal, kPrincipal)) {
    return InvalidField("principal", "must be \"admin\" or \"tenant:<name>\"");
  }
  if (!std::regex_match(t.secret_hash, kSha256)) {
    return InvalidField("secret_hash", "must be a SHA-256 digest in lower-case hex");
  }
  return Status::Ok();
}

TrustTier DefaultTier(std::string name, std::string display_name, std::string description, gpu::Tier sharing,
                      std::string co_tenancy, std::string runtime_class, std::int64_t ttl, TimePoint at,
                      tenancy::ApiLimits api_limits) {
  return {std::move(name),
          std::move(display_name),
          std::move(description),
          sharing,
          std::move(co_tenancy),
          std::move(runtime_class),
          ttl,
          at,
          at,
          api_limits};
}

class FakeTrustTiers final : public TrustTierRepository {
 public:
  explicit FakeTrustTiers(FakeWork& w) : w_(w) {}

  Result<std::vector<TrustTier>> List() override {
    std::vector<TrustTier> tiers;
    for (const auto& [name, tier] : w_.s.tiers) tiers.push_back(tier);
    return tiers;
  }
  Result<TrustTier> Get(const std::string& name) override {
    const auto it = w_.s.tiers.find(name);
    if (it == w_.s.tiers.end()) return NotFound("trust tier \"" + name + "\" not found");
    return it->second;
  }
  Status Insert(const TrustTier& tier) override {
    SEPTA_RETURN_IF_ERROR(w_.CheckWritable());
    SEPTA_RETURN_IF_ERROR(CheckTierRow(tier));
    if (w_.s.tiers.count(tier.name)) return AlreadyExists("a trust tier with this name already exists");
    TrustTier row = tier;
    row.create_time = Truncated(row.create_time);
    row.update_time = Truncated(row.update_time);
    w_.s.tiers.emplace(row.name, std::move(row));
    return Status::Ok();
  }
  Status Update(const TrustTier& tier, std::int64_t expected_version) override {
    SEPTA_RETURN_IF_ERROR(w_.CheckWritable());
    auto it = w_.s.tiers.find(tier.name);
    SEPTA_RETURN_IF_ERROR(CheckVersion(tier.name, it, expected_version));
    SEPTA_RETURN_IF_ERROR(CheckTierRow(tier));
    const TimePoint created = it->second.create_time;  // immutable, as in PgStore
    it->second = tier;
    it->second.create_time = created;
    it->second.update_time = Truncated(tier.update_time);
    return Status::Ok();
  }
  Status Delete(const std::string& name, std::int64_t expected_version) override {
    SEPTA_RETURN_IF_ERROR(w_.CheckWritable());
    auto it = w_.s.tiers.find(name);
    SEPTA_RETURN_IF_ERROR(CheckVersion(name, it, expected_version));
    for (const auto& [tenant_name, tenant] : w_.s.tenants) {
      if (tenant.trust_tier == name) {
        return FailedPrecondition("tenants still have the trust tier; move them to another first");
      }
    }
    w_.s.tiers.erase(it);
    return Status::Ok();
  }

 private:
  // The CHECK constraints of migrations/0001, 0017 and 0018 on trust_tiers.
  static Status CheckTierRow(const TrustTier& t) {
    if (!IsDnsLabel(t.name, 40)) {
      return InvalidField("name",
                          "must be a DNS-1123 label of 1-40 characters: lower-case letters, digits and '-', "
                          "starting and ending with a letter or digit");
    }
    if (t.credential_ttl_max_seconds <= 0) return InvalidField("credential_ttl_max", "must be positive");
    if (t.version <= 0) return InvalidField("version", "must be positive");
    return Status::Ok();
  }
  Status CheckVersion(const std::string& name, std::map<std::string, TrustTier>::iterator it,
                      std::int64_t expected_version) const {
    if (it == w_.s.tiers.end()) return NotFound("trust tier \"" + name + "\" not found");
    if (it->second.version != expected_version) {
      return Aborted("trust tier \"" + name + "\" is at version " + std::to_string(it->second.version) + ", not " +
                     std::to_string(expected_version));
    }
    return Status::Ok();
  }

  FakeWork& w_;
};

class FakeTenants final : public TenantRepository {
 public:
  explicit FakeTenants(FakeWork& w) : w_(w) {}

  Result<Tenant> Get(const std::string& name) override {
    const auto it = w_.s.tenants.find(name);
    if (it == w_.s.tenants.end()) return NotFound("tenant \"" + name + "\" not found");
    return it->second;
  }
  Result<std::vector<Tenant>> List(const TenantQuery& query) override {
    SEPTA_RETURN_IF_ERROR(CheckLimit(query.limit));
    std::vector<Tenant> tenants;
    for (auto it = w_.s.tenants.upper_bound(query.after_name);
         it != w_.s.tenants.end() && static_cast<int>(tenants.size()) < query.limit; ++it) {
      const Tenant& t = it->second;
      if (query.trust_tier && t.trust_tier != *query.trust_tier) continue;
      const bool labels_match = std::all_of(query.labels.begin(), query.labels.end(), [&](const auto& label) {
        const auto found = t.labels.find(label.first);
        return found != t.labels.end() && found->second == label.second;
      });
      if (labels_match) tenants.push_back(t);
    }
    return tenants;
  }
  Status Insert(const Tenant& tenant) override {
    SEPTA_RETURN_IF_ERROR(w_.CheckWritable());
    SEPTA_RETURN_IF_ERROR(CheckTenantRow(tenant));
    if (w_.s.tenants.count(tenant.name)) return AlreadyExists("a tenant with this name already exists");
    SEPTA_RETURN_IF_ERROR(CheckTierReference(w_.s, tenant));
    Tenant row = tenant;
    row.create_time = Truncated(row.create_time);
    row.update_time = Truncated(row.update_time);
    w_.s.tenants.emplace(row.name, std::move(row));
    return Status::Ok();
  }
  Status Update(const Tenant& tenant, std::int64_t expected_version) override {
    SEPTA_RETURN_IF_ERROR(w_.CheckWritable());
    auto it = w_.s.tenants.find(tenant.name);
    SEPTA_RETURN_IF_ERROR(CheckVersion(tenant.name, it, expected_version));
    SEPTA_RETURN_IF_ERROR(CheckTenantRow(tenant));
    SEPTA_RETURN_IF_ERROR(CheckTierReference(w_.s, tenant));
    const TimePoint created = it->second.create_time;  // immutable, as in PgStore
    // A change of state is told to token caches, as migrations/0015's trigger tells it.
    if (it->second.state != tenant.state) w_.revocations.push_back({"", "tenant:" + tenant.name});
    it->second = tenant;
    it->second.create_time = created;
    it->second.update_time = Truncated(tenant.update_time);
    return Status::Ok();
  }
  Status Delete(const std::string& name, std::int64_t expected_version) override {
    SEPTA_RETURN_IF_ERROR(w_.CheckWritable());
    auto it = w_.s.tenants.find(name);
    SEPTA_RETURN_IF_ERROR(CheckVersion(name, it, expected_version));
    const auto owned = w_.s.vclusters.lower_bound({name, ""});
    if (owned != w_.s.vclusters.end() && owned->first.first == name) {
      return FailedPrecondition("the tenant still owns virtual clusters; delete them first");
    }
    w_.s.tenants.erase(it);
    // Its members go with it (tenant_members_tenant_fkey, ON DELETE CASCADE).
    std::erase_if(w_.s.tenant_members, [&](const auto& member) { return std::get<0>(member.first) == name; });
    return Status::Ok();
  }

 private:
  Status CheckVersion(const std::string& name, std::map<std::string, Tenant>::iterator it,
                      std::int64_t expected_version) const {
    if (it == w_.s.tenants.end()) return NotFound("tenant \"" + name + "\" not found");
    if (it->second.version != expected_version) {
      return Aborted("tenant \"" + name + "\" is at version " + std::to_string(it->second.version) + ", not " +
                     std::to_string(expected_version));
    }
    return Status::Ok();
  }
  FakeWork& w_;
};

class FakeTokens final : public TokenRepository {
 public:
  explicit FakeTokens(FakeWork& w) : w_(w) {}

  Status Insert(const ApiToken& token) override {
    SEPTA_RETURN_IF_ERROR(w_.CheckWritable());
    SEPTA_RETURN_IF_ERROR(CheckTokenRow(token));
    if (w_.s.tokens.count(token.id)) return AlreadyExists("an API token with this id already exists");
    // api_tokens_parent_by_kind and api_tokens_parent_fkey (migrations/0019)
    if ((token.kind == TokenKind::kApi) != token.parent_id.empty()) {
      return InvalidField("parent_id", "a session or sign-in code has a parent token, an API token none");
    }
    if (!token.parent_id.empty() && !w_.s.tokens.count(token.parent_id)) {
      return InvalidField("parent_id", "no such token");
    }
    for (const auto& [id, other] : w_.s.tokens) {
      if (other.secret_hash == token.secret_hash) return AlreadyExists("an API token with this secret already exists");
    }
    ApiToken row = token;
    row.create_time = Truncated(row.create_time);
    row.expire_time = Truncated(row.expire_time);
    row.revoke_time = Truncated(row.revoke_time);
    w_.s.tokens.emplace(row.id, std::move(row));
    return Status::Ok();
  }
  Result<ApiToken> Get(const std::string& id) override {
    const auto it = w_.s.tokens.find(id);
    if (it == w_.s.tokens.end()) return NotFound("API token \"" + id + "\" not found");
    return it->second;
  }
  Result<std::vector<ApiToken>> List(const std::string& principal, TokenKind kind) override {
    std::vector<ApiToken> tokens;
    for (const auto& [id, token] : w_.s.tokens) {
      if ((principal.empty() || token.principal == principal) && token.kind == kind) tokens.push_back(token);
    }
    std::sort(tokens.begin(), tokens.end(), [](const ApiToken& a, const ApiToken& b) {
      return std::tie(a.create_time, a.id) < std::tie(b.create_time, b.id);
    });
    return tokens;
  }
  Status Revoke(const std::string& id, TimePoint when) override {
    SEPTA_RETURN_IF_ERROR(w_.CheckWritable());
    auto it = w_.s.tokens.find(id);
    if (it == w_.s.tokens.end()) return NotFound("API token \"" + id + "\" not found");
    if (!it->second.revoke_time) it->second.revoke_time = Truncated(when);  // the first revocation stands
    w_.revocations.push_back({id, ""});
    return Status::Ok();
  }
  Status RevokeAllOf(const std::string& principal, TimePoint when) override {
    SEPTA_RETURN_IF_ERROR(w_.CheckWritable());
    for (auto& [id, token] : w_.s.tokens) {
      if (token.principal == principal && !token.revoke_time) token.revoke_time = Truncated(when);
    }
    w_.revocations.push_back({"", principal});
    return Status::Ok();
  }
  Status CapLifetimes(const std::string& principal, std::chrono::seconds max_lifetime) override {
    SEPTA_RETURN_IF_ERROR(w_.CheckWritable());
    for (auto& [id, token] : w_.s.tokens) {
      if (token.principal != principal || token.revoke_time) continue;
      const TimePoint cap = token.create_time + max_lifetime;
      if (!token.expire_time || *token.expire_time > cap) token.expire_time = cap;
    }
    w_.revocations.push_back({"", principal});
    return Status::Ok();
  }
  Result<int> CountLive(const std::string& principal, TimePoint now) override {
    return static_cast<int>(std::count_if(w_.s.tokens.begin(), w_.s.tokens.end(), [&](const auto& entry) {
      const ApiToken& t = entry.second;
      return t.principal == principal && t.kind == TokenKind::kApi && IsLive(t, now);
    }));
  }
  Result<int> DeleteDead(TimePoint dead_before, int limit) override {
    SEPTA_RETURN_IF_ERROR(w_.CheckWritable());
    const auto died_before = [&](const ApiToken& t) {
      const TimePoint died =
          std::min(t.revoke_time.value_or(TimePoint::max()), t.expire_time.value_or(TimePoint::max()));
      return died < dead_before;
    };
    std::vector<std::string> dead_api;  // in id order, as PostgreSQL's LIMIT takes them
    for (const auto& [id, token] : w_.s.tokens) {
      if (token.kind == TokenKind::kApi && died_before(token)) dead_api.push_back(id);
    }
    const std::set<std::string> all_dead_api(dead_api.begin(), dead_api.end());
    std::erase_if(w_.s.tokens, [&](const auto& entry) {
      const ApiToken& t = entry.second;
      return t.kind != TokenKind::kApi && (died_before(t) || all_dead_api.contains(t.parent_id));
    });
    if (dead_api.size() > static_cast<std::size_t>(limit)) dead_api.resize(static_cast<std::size_t>(limit));
    for (const std::string& id : dead_api) w_.s.tokens.erase(id);
    return static_cast<int>(dead_api.size());
  }

 private:
  FakeWork& w_;
};

class FakeAuditLog final : public AuditLog {
 public:
  explicit FakeAuditLog(FakeWork& w) : w_(w) {}

  Status Append(const AuditRecord& record) override {
    SEPTA_RETURN_IF_ERROR(w_.CheckWritable());
    if (record.action.empty()) return InvalidField("action", "must not be empty");
    AuditRecord row = record;
    row.id = ++w_.s.last_audit_id;
    row.time = Truncated(row.time);
    w_.s.audit.push_back(std::move(row));
    return Status::Ok();
  }
  Result<std::vector<AuditRecord>> List(const std::string& resource, int limit) override {
    SEPTA_RETURN_IF_ERROR(CheckLimit(limit));
    std::vector<AuditRecord> records;
    for (const auto& r : w_.s.audit) {
      if (resource.empty() || r.resource == resource) records.push_back(r);
    }
    std::sort(records.begin(), records.end(), [](const AuditRecord& a, const AuditRecord& b) {
      return std::tie(a.time, a.id) > std::tie(b.time, b.id);
    });
    if (static_cast<int>(records.size()) > limit) records.resize(limit);
    return records;
  }

 private:
  FakeWork& w_;
};

class FakeIdempotency final : public IdempotencyRepository {
 public:
  explicit FakeIdempotency(FakeWork& w) : w_(w) {}

  Result<IdempotencyRecord> Get(const std::string& principal, const std::string& key) override {
    const auto it = w_.s.idempotency.find({principal, key});
    if (it == w_.s.idempotency.end()) return NotFound("idempotency key \"" + key + "\" not found");
    return it->second;
  }
  Status Insert(const IdempotencyRecord& record) override {
    SEPTA_RETURN_IF_ERROR(w_.CheckWritable());
    if (record.key.empty()) return InvalidField("key", "must not be empty");
    if (w_.s.idempotency.count({record.principal, record.key})) {
      return AlreadyExists("this idempotency key was already used");
    }
    IdempotencyRecord row = record;
    row.create_time = Truncated(row.create_time);
    w_.s.idempotency.emplace(std::make_pair(row.principal, row.key), std::move(row));
    return Status::Ok();
  }
  Status Delete(const std::string& principal, const std::string& key) override {
    SEPTA_RETURN_IF_ERROR(w_.CheckWritable());
    w_.s.idempotency.erase({principal, key});
    return Status::Ok();
  }
  Result<int> DeleteBefore(TimePoint cutoff, int limit) override {
    SEPTA_RETURN_IF_ERROR(w_.CheckWritable());
    SEPTA_RETURN_IF_ERROR(CheckLimit(limit));
    std::vector<std::pair<TimePoint, std::pair<std::string, std::string>>> expired;
    for (const auto& [id, record] : w_.s.idempotency) {
      if (record.create_time < cutoff) expired.emplace_back(record.create_time, id);
    }
    std::sort(expired.begin(), expired.end());
    if (static_cast<int>(expired.size()) > limit) expired.resize(limit);
    for (const auto& e : expired) w_.s.idempotency.erase(e.second);
    return static_cast<int>(expired.size());
  }

 private:
  FakeWork& w_;
};

class FakeTx final : public Tx {
 public:
  FakeTx(FakeStore::State& state, TxMode mode) : work_{state, mode, {}} {}

  std::vector<Revocation>& revocations() { return work_.revocations; }

  TrustTierRepository& TrustTiers() override { return tiers_; }
  TenantRepository& Tenants() override { return tenants_; }
  TenantMemberRepository& TenantMembers() override { return tenant_members_; }
  TokenRepository& Tokens() override { return tokens_; }
  PersonSessionRepository& PersonSessions() override { return person_sessions_; }
  AuditLog& Audit() override { return audit_; }
  IdempotencyRepository& Idempotency() override { return idempotency_; }
  VirtualClusterRepository& VirtualClusters() override { return vclusters_; }
  InventoryRepository& Inventory() override { return inventory_; }
  ReservationRepository& Reservations() override { return reservations_; }
  CredentialRepository& Credentials() override { return credentials_; }
  ApplySetRepository& ApplySets() override { return apply_sets_; }
  TokenDeclarationRepository& TokenDeclarations() override { return token_declarations_; }
  UsageRepository& Usage() override { return usage_; }

 private:
  FakeWork work_;
  FakeTrustTiers tiers_{work_};
  FakeTenants tenants_{work_};
  FakeTenantMembers tenant_members_{work_};
  FakeTokens tokens_{work_};
  FakePersonSessions person_sessions_{work_};
  FakeAuditLog audit_{work_};
  FakeIdempotency idempotency_{work_};
  FakeVirtualClusters vclusters_{work_};
  FakeInventory inventory_{work_};
  FakeReservations reservations_{work_};
  FakeCredentials credentials_{work_};
  FakeApplySets apply_sets_{work_};
  FakeTokenDeclarations token_declarations_{work_};
  FakeUsage usage_{work_};
};

}  // namespace

FakeStore::FakeStore(TimePoint seeded_at) {
  const TimePoint at = Truncated(seeded_at);
  // As migrations/0001_init.sql and 0017_api_limits.sql seed them.
  const tenancy::ApiLimits small{5000, 64 << 20, 100, 32}, medium{10000, 128 << 20, 100, 32},
      large{20000, 256 << 20, 200, 64};
  for (TrustTier tier : {
           DefaultTier("shared", "Shared", "One team, trusted: fractional, time-sliced GPUs.", gpu::Tier::kShared,
                       "other shared tenants on the same GPU", "nvidia", 86400, at, small),
           DefaultTier("isolated", "Isolated", "Internal teams with competing priorities: MIG slices.",
                       gpu::Tier::kIsolated, "other tenants' MIG slices on the same GPU, never a time-sliced share",
                       "nvidia", 28800, at, medium),
           DefaultTier("dedicated", "Dedicated", "Paying customers with SLAs: whole GPUs.", gpu::Tier::kDedicated,
                       "other tenants' whole GPUs on the same node", "kata-qemu-nvidia-gpu", 3600, at, large),
           DefaultTier("exclusive", "Exclusive", "Regulated or adversarial: whole nodes.", gpu::Tier::kExclusive,
                       "nobody on the node", "kata-qemu-nvidia-gpu", 900, at, large),
       }) {
    state_.tiers.emplace(tier.name, std::move(tier));
  }
}

std::optional<Status> FakeStore::TakeInjectedFailure() {
  if (failures_.empty()) return std::nullopt;
  Status failure = std::move(failures_.front());
  failures_.pop_front();
  return failure;
}

Status FakeStore::Transact(TxMode mode, const std::function<Status(Tx&)>& body) {
  std::vector<Revocation> committed;
  std::function<void(const Revocation&)> watcher;
  Status status;
  {
    std::lock_guard lock(mu_);
    if (auto failure = TakeInjectedFailure()) return *failure;
    State draft = state_;
    FakeTx tx(draft, mode);
    status = body(tx);
    if (status.ok() && mode == TxMode::kReadWrite) {
      state_ = std::move(draft);
      committed = std::move(tx.revocations());
      watcher = on_revocation_;
    }
  }
  if (watcher) {
    for (const Revocation& r : committed) watcher(r);
  }
  return status;
}

void FakeStore::WatchRevocations(std::function<void(const Revocation&)> on_revocation) {
  std::lock_guard lock(mu_);
  on_revocation_ = std::move(on_revocation);
}

FakeStore::State FakeStore::Snapshot() {
  std::lock_guard lock(mu_);
  return state_;
}

Status FakeStore::Ready() {
  std::lock_guard lock(mu_);
  if (auto failure = TakeInjectedFailure()) return *failure;
  return Status::Ok();
}

void FakeStore::FailNext(Status failure, int times) {
  std::lock_guard lock(mu_);
  for (int i = 0; i < times; ++i) failures_.push_back(failure);
}

}  // namespace septa::core
