#include "tests/support/fake_store.h"

#include <algorithm>
#include <regex>

namespace septa::core {
namespace {

constexpr int kMaxListLimit = 1000;

// PostgreSQL keeps microseconds; so does the fake, so that a value read back
// compares equal with either store.
TimePoint Truncated(TimePoint t) {
  return TimePoint(std::chrono::duration_cast<TimePoint::duration>(
      std::chrono::floor<std::chrono::microseconds>(t.time_since_epoch())));
}
std::optional<TimePoint> Truncated(const std::optional<TimePoint>& t) {
  return t ? std::optional<TimePoint>(Truncated(*t)) : std::nullopt;
}

// The CHECK constraints of migrations/0001_init.sql, with PgStore's field names.
bool IsDnsLabel(const std::string& name, size_t max_length) {
  static const std::regex kLabel("^[a-z0-9]([-a-z0-9]*[a-z0-9])?$");
  return name.size() <= max_length && std::regex_match(name, kLabel);
}

Status CheckTenantRow(const Tenant& t) {
  if (!IsDnsLabel(t.name, 40)) {
    return InvalidField("name",
                        "must be a DNS-1123 label of 1-40 characters: lower-case letters, digits and '-', "
                        "starting and ending with a letter or digit");
  }
  if (t.version <= 0) return InvalidField("version", "must be positive");
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

Status CheckLimit(int limit) {
  if (limit < 1 || limit > kMaxListLimit) {
    return InvalidField("limit", "must be between 1 and " + std::to_string(kMaxListLimit));
  }
  return Status::Ok();
}

TrustTier DefaultTier(std::string name, std::string display_name, std::string description, gpu::Tier sharing,
                      std::string co_tenancy, std::string runtime_class, std::int64_t ttl, TimePoint at) {
  return {std::move(name),
          std::move(display_name),
          std::move(description),
          sharing,
          std::move(co_tenancy),
          std::move(runtime_class),
          ttl,
          at,
          at};
}

class FakeTx final : public Tx {
 public:
  FakeTx(FakeStore::State& state, TxMode mode) : s_(state), mode_(mode) {}

  // Told to the watcher once the transaction commits.
  std::vector<Revocation> revocations;

  Result<std::vector<TrustTier>> ListTrustTiers() override {
    std::vector<TrustTier> tiers;
    for (const auto& [name, tier] : s_.tiers) tiers.push_back(tier);
    return tiers;
  }
  Result<TrustTier> GetTrustTier(const std::string& name) override {
    const auto it = s_.tiers.find(name);
    if (it == s_.tiers.end()) return NotFound("trust tier \"" + name + "\" not found");
    return it->second;
  }

  Result<Tenant> GetTenant(const std::string& name) override {
    const auto it = s_.tenants.find(name);
    if (it == s_.tenants.end()) return NotFound("tenant \"" + name + "\" not found");
    return it->second;
  }
  Result<std::vector<Tenant>> ListTenants(const TenantQuery& query) override {
    SEPTA_RETURN_IF_ERROR(CheckLimit(query.limit));
    std::vector<Tenant> tenants;
    for (auto it = s_.tenants.upper_bound(query.after_name);
         it != s_.tenants.end() && static_cast<int>(tenants.size()) < query.limit; ++it) {
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
  Status InsertTenant(const Tenant& tenant) override {
    SEPTA_RETURN_IF_ERROR(CheckWritable());
    SEPTA_RETURN_IF_ERROR(CheckTenantRow(tenant));
    if (s_.tenants.count(tenant.name)) return AlreadyExists("a tenant with this name already exists");
    SEPTA_RETURN_IF_ERROR(CheckTierReference(s_, tenant));
    Tenant row = tenant;
    row.create_time = Truncated(row.create_time);
    row.update_time = Truncated(row.update_time);
    s_.tenants.emplace(row.name, std::move(row));
    return Status::Ok();
  }
  Status UpdateTenant(const Tenant& tenant, std::int64_t expected_version) override {
    SEPTA_RETURN_IF_ERROR(CheckWritable());
    auto it = s_.tenants.find(tenant.name);
    SEPTA_RETURN_IF_ERROR(CheckVersion(tenant.name, it, expected_version));
    SEPTA_RETURN_IF_ERROR(CheckTenantRow(tenant));
    SEPTA_RETURN_IF_ERROR(CheckTierReference(s_, tenant));
    const TimePoint created = it->second.create_time;  // immutable, as in PgStore
    it->second = tenant;
    it->second.create_time = created;
    it->second.update_time = Truncated(tenant.update_time);
    return Status::Ok();
  }
  Status DeleteTenant(const std::string& name, std::int64_t expected_version) override {
    SEPTA_RETURN_IF_ERROR(CheckWritable());
    auto it = s_.tenants.find(name);
    SEPTA_RETURN_IF_ERROR(CheckVersion(name, it, expected_version));
    s_.tenants.erase(it);
    return Status::Ok();
  }

  Status InsertToken(const ApiToken& token) override {
    SEPTA_RETURN_IF_ERROR(CheckWritable());
    SEPTA_RETURN_IF_ERROR(CheckTokenRow(token));
    if (s_.tokens.count(token.id)) return AlreadyExists("an API token with this id already exists");
    for (const auto& [id, other] : s_.tokens) {
      if (other.secret_hash == token.secret_hash) return AlreadyExists("an API token with this secret already exists");
    }
    ApiToken row = token;
    row.create_time = Truncated(row.create_time);
    row.expire_time = Truncated(row.expire_time);
    row.revoke_time = Truncated(row.revoke_time);
    s_.tokens.emplace(row.id, std::move(row));
    return Status::Ok();
  }
  Result<ApiToken> GetToken(const std::string& id) override {
    const auto it = s_.tokens.find(id);
    if (it == s_.tokens.end()) return NotFound("API token \"" + id + "\" not found");
    return it->second;
  }
  Result<std::vector<ApiToken>> ListTokens(const std::string& principal) override {
    std::vector<ApiToken> tokens;
    for (const auto& [id, token] : s_.tokens) {
      if (principal.empty() || token.principal == principal) tokens.push_back(token);
    }
    std::sort(tokens.begin(), tokens.end(), [](const ApiToken& a, const ApiToken& b) {
      return std::tie(a.create_time, a.id) < std::tie(b.create_time, b.id);
    });
    return tokens;
  }
  Status RevokeToken(const std::string& id, TimePoint when) override {
    SEPTA_RETURN_IF_ERROR(CheckWritable());
    auto it = s_.tokens.find(id);
    if (it == s_.tokens.end()) return NotFound("API token \"" + id + "\" not found");
    if (!it->second.revoke_time) it->second.revoke_time = Truncated(when);  // the first revocation stands
    revocations.push_back({id, ""});
    return Status::Ok();
  }
  Status RevokeTokensOf(const std::string& principal, TimePoint when) override {
    SEPTA_RETURN_IF_ERROR(CheckWritable());
    for (auto& [id, token] : s_.tokens) {
      if (token.principal == principal && !token.revoke_time) token.revoke_time = Truncated(when);
    }
    revocations.push_back({"", principal});
    return Status::Ok();
  }

  Status CapTokenLifetimes(const std::string& principal, std::chrono::seconds max_lifetime) override {
    SEPTA_RETURN_IF_ERROR(CheckWritable());
    for (auto& [id, token] : s_.tokens) {
      if (token.principal != principal || token.revoke_time) continue;
      const TimePoint cap = token.create_time + max_lifetime;
      if (!token.expire_time || *token.expire_time > cap) token.expire_time = cap;
    }
    revocations.push_back({"", principal});
    return Status::Ok();
  }

  Status AppendAudit(const AuditRecord& record) override {
    SEPTA_RETURN_IF_ERROR(CheckWritable());
    if (record.action.empty()) return InvalidField("action", "must not be empty");
    AuditRecord row = record;
    row.id = ++s_.last_audit_id;
    row.time = Truncated(row.time);
    s_.audit.push_back(std::move(row));
    return Status::Ok();
  }
  Result<std::vector<AuditRecord>> ListAudit(const std::string& resource, int limit) override {
    SEPTA_RETURN_IF_ERROR(CheckLimit(limit));
    std::vector<AuditRecord> records;
    for (const auto& r : s_.audit) {
      if (resource.empty() || r.resource == resource) records.push_back(r);
    }
    std::sort(records.begin(), records.end(), [](const AuditRecord& a, const AuditRecord& b) {
      return std::tie(a.time, a.id) > std::tie(b.time, b.id);
    });
    if (static_cast<int>(records.size()) > limit) records.resize(limit);
    return records;
  }

  Result<IdempotencyRecord> GetIdempotency(const std::string& principal, const std::string& key) override {
    const auto it = s_.idempotency.find({principal, key});
    if (it == s_.idempotency.end()) return NotFound("idempotency key \"" + key + "\" not found");
    return it->second;
  }
  Status InsertIdempotency(const IdempotencyRecord& record) override {
    SEPTA_RETURN_IF_ERROR(CheckWritable());
    if (record.key.empty()) return InvalidField("key", "must not be empty");
    if (s_.idempotency.count({record.principal, record.key})) {
      return AlreadyExists("this idempotency key was already used");
    }
    IdempotencyRecord row = record;
    row.create_time = Truncated(row.create_time);
    s_.idempotency.emplace(std::make_pair(row.principal, row.key), std::move(row));
    return Status::Ok();
  }
  Status DeleteIdempotency(const std::string& principal, const std::string& key) override {
    SEPTA_RETURN_IF_ERROR(CheckWritable());
    s_.idempotency.erase({principal, key});
    return Status::Ok();
  }
  Result<int> DeleteIdempotencyBefore(TimePoint cutoff, int limit) override {
    SEPTA_RETURN_IF_ERROR(CheckWritable());
    SEPTA_RETURN_IF_ERROR(CheckLimit(limit));
    std::vector<std::pair<TimePoint, std::pair<std::string, std::string>>> expired;
    for (const auto& [id, record] : s_.idempotency) {
      if (record.create_time < cutoff) expired.emplace_back(record.create_time, id);
    }
    std::sort(expired.begin(), expired.end());
    if (static_cast<int>(expired.size()) > limit) expired.resize(limit);
    for (const auto& e : expired) s_.idempotency.erase(e.second);
    return static_cast<int>(expired.size());
  }

 private:
  Status CheckWritable() const {
    if (mode_ == TxMode::kReadOnly) return FailedPrecondition("write in a read-only transaction");
    return Status::Ok();
  }
  Status CheckVersion(const std::string& name, std::map<std::string, Tenant>::iterator it,
                      std::int64_t expected_version) const {
    if (it == s_.tenants.end()) return NotFound("tenant \"" + name + "\" not found");
    if (it->second.version != expected_version) {
      return Aborted("tenant \"" + name + "\" is at version " + std::to_string(it->second.version) + ", not " +
                     std::to_string(expected_version));
    }
    return Status::Ok();
  }

  FakeStore::State& s_;
  TxMode mode_;
};

}  // namespace

FakeStore::FakeStore(TimePoint seeded_at) {
  const TimePoint at = Truncated(seeded_at);
  for (TrustTier tier : {
           DefaultTier("shared", "Shared", "One team, trusted: fractional, time-sliced GPUs.", gpu::Tier::kShared,
                       "other shared tenants on the same GPU", "nvidia", 86400, at),
           DefaultTier("isolated", "Isolated", "Internal teams with competing priorities: MIG slices.",
                       gpu::Tier::kIsolated, "other tenants' MIG slices on the same GPU, never a time-sliced share",
                       "nvidia", 28800, at),
           DefaultTier("dedicated", "Dedicated", "Paying customers with SLAs: whole GPUs.", gpu::Tier::kDedicated,
                       "other tenants' whole GPUs on the same node", "kata-qemu-nvidia-gpu", 3600, at),
           DefaultTier("exclusive", "Exclusive", "Regulated or adversarial: whole nodes.", gpu::Tier::kExclusive,
                       "nobody on the node", "kata-qemu-nvidia-gpu", 900, at),
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
      committed = std::move(tx.revocations);
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
