#include "services/store/pg_tx.h"

#include "services/store/revocation_listener.h"

#include <nlohmann/json.hpp>

namespace septa::store {
namespace {

using core::ApiToken;
using core::AuditRecord;
using core::IdempotencyRecord;
using core::Role;
using core::Tenant;
using core::TenantState;
using core::TrustTier;

// Rows never contain more than this; callers ask for fewer.
constexpr int kMaxListLimit = 1000;

// Instants cross the boundary as integer microseconds since the epoch
// (septa_ts / septa_micros in migrations/0001_init.sql): exact, and
// PostgreSQL's resolution.
std::int64_t Micros(TimePoint t) { return std::chrono::floor<std::chrono::microseconds>(t.time_since_epoch()).count(); }
TimePoint FromMicros(std::int64_t micros) {
  return TimePoint(std::chrono::duration_cast<TimePoint::duration>(std::chrono::microseconds(micros)));
}

// A nullable bigint parameter: libpqxx 6.4 sends a null const char* as NULL.
class NullableMicros {
 public:
  explicit NullableMicros(const std::optional<TimePoint>& t) : null_(!t) {
    if (t) text_ = std::to_string(Micros(*t));
  }
  const char* param() const { return null_ ? nullptr : text_.c_str(); }

 private:
  bool null_;
  std::string text_;
};

std::optional<TimePoint> OptionalTime(const pqxx::field& f) {
  if (f.is_null()) return std::nullopt;
  return FromMicros(f.as<std::int64_t>());
}

gpu::Tier SharingOf(const std::string& text) {
  if (text == "mig") return gpu::Tier::kIsolated;
  if (text == "whole-gpu") return gpu::Tier::kDedicated;
  if (text == "whole-node") return gpu::Tier::kExclusive;
  return gpu::Tier::kShared;  // the CHECK constraint admits nothing else
}
const char* StateText(TenantState state) { return state == TenantState::kSuspended ? "suspended" : "active"; }
TenantState StateOf(const std::string& text) {
  return text == "suspended" ? TenantState::kSuspended : TenantState::kActive;
}
const char* RoleText(Role role) { return role == Role::kViewer ? "viewer" : "owner"; }
Role RoleOf(const std::string& text) { return text == "viewer" ? Role::kViewer : Role::kOwner; }

std::string LabelsJson(const std::map<std::string, std::string>& labels) { return nlohmann::json(labels).dump(); }
std::map<std::string, std::string> LabelsOf(const std::string& json) {
  return nlohmann::json::parse(json).get<std::map<std::string, std::string>>();
}

constexpr char kTierColumns[] =
    "name, display_name, description, gpu_sharing, co_tenancy, runtime_class, credential_ttl_max_seconds, "
    "septa_micros(create_time), septa_micros(update_time)";
TrustTier TierOf(const pqxx::row& r) {
  return {r[0].as<std::string>(),
          r[1].as<std::string>(),
          r[2].as<std::string>(),
          SharingOf(r[3].as<std::string>()),
          r[4].as<std::string>(),
          r[5].as<std::string>(),
          r[6].as<std::int64_t>(),
          FromMicros(r[7].as<std::int64_t>()),
          FromMicros(r[8].as<std::int64_t>())};
}

constexpr char kTenantColumns[] =
    "name, display_name, trust_tier, labels::text, state, septa_micros(create_time), septa_micros(update_time), "
    "version";
Tenant TenantOf(const pqxx::row& r) {
  return {r[0].as<std::string>(),
          r[1].as<std::string>(),
          r[2].as<std::string>(),
          LabelsOf(r[3].as<std::string>()),
          StateOf(r[4].as<std::string>()),
          FromMicros(r[5].as<std::int64_t>()),
          FromMicros(r[6].as<std::int64_t>()),
          r[7].as<std::int64_t>()};
}

constexpr char kTokenColumns[] =
    "id, principal, role, secret_hash, description, septa_micros(create_time), septa_micros(expire_time), "
    "septa_micros(revoke_time)";
ApiToken TokenOf(const pqxx::row& r) {
  return {r[0].as<std::string>(), r[1].as<std::string>(), RoleOf(r[2].as<std::string>()),
          r[3].as<std::string>(), r[4].as<std::string>(), FromMicros(r[5].as<std::int64_t>()),
          OptionalTime(r[6]),     OptionalTime(r[7])};
}

constexpr char kAuditColumns[] = "id, septa_micros(time), principal, action, resource, old_etag, new_etag, request_id";
AuditRecord AuditOf(const pqxx::row& r) {
  return {r[0].as<std::int64_t>(), FromMicros(r[1].as<std::int64_t>()),
          r[2].as<std::string>(),  r[3].as<std::string>(),
          r[4].as<std::string>(),  r[5].as<std::string>(),
          r[6].as<std::string>(),  r[7].as<std::string>()};
}

constexpr char kIdempotencyColumns[] = "principal, key, request_hash, resource, septa_micros(create_time)";
IdempotencyRecord IdempotencyOf(const pqxx::row& r) {
  return {r[0].as<std::string>(), r[1].as<std::string>(), r[2].as<std::string>(), r[3].as<std::string>(),
          FromMicros(r[4].as<std::int64_t>())};
}

Status CheckLimit(int limit) {
  if (limit < 1 || limit > kMaxListLimit) {
    return InvalidField("limit", "must be between 1 and " + std::to_string(kMaxListLimit));
  }
  return Status::Ok();
}

}  // namespace

void PrepareStatements(pqxx::connection& c) {
  const std::string tier = kTierColumns, tenant = kTenantColumns, token = kTokenColumns, audit = kAuditColumns,
                    idempotency = kIdempotencyColumns;
  c.prepare("tier_list", "SELECT " + tier + " FROM trust_tiers ORDER BY name");
  c.prepare("tier_get", "SELECT " + tier + " FROM trust_tiers WHERE name = $1");
  c.prepare("tenant_get", "SELECT " + tenant + " FROM tenants WHERE name = $1");
  c.prepare("tenant_list", "SELECT " + tenant +
                               " FROM tenants WHERE ($1::text IS NULL OR trust_tier = $1::text)"
                               " AND labels @> $2::jsonb AND name > $3 ORDER BY name LIMIT $4");
  c.prepare("tenant_insert",
            "INSERT INTO tenants (name, display_name, trust_tier, labels, state, create_time, update_time, version)"
            " VALUES ($1, $2, $3, $4::jsonb, $5, septa_ts($6), septa_ts($7), $8)");
  c.prepare("tenant_update",
            "UPDATE tenants SET display_name = $2, trust_tier = $3, labels = $4::jsonb, state = $5,"
            " update_time = septa_ts($6), version = $7 WHERE name = $1 AND version = $8");
  c.prepare("tenant_delete", "DELETE FROM tenants WHERE name = $1 AND version = $2");
  c.prepare("tenant_version", "SELECT version FROM tenants WHERE name = $1");
  c.prepare("token_insert",
            "INSERT INTO api_tokens (id, principal, role, secret_hash, description, create_time, expire_time,"
            " revoke_time) VALUES ($1, $2, $3, $4, $5, septa_ts($6), septa_ts($7::bigint), septa_ts($8::bigint))");
  c.prepare("token_get", "SELECT " + token + " FROM api_tokens WHERE id = $1");
  c.prepare("token_list",
            "SELECT " + token + " FROM api_tokens WHERE ($1 = '' OR principal = $1) ORDER BY create_time, id");
  // Revoking twice keeps the first revocation time.
  c.prepare("token_revoke", "UPDATE api_tokens SET revoke_time = coalesce(revoke_time, septa_ts($2)) WHERE id = $1");
  // Delivered to every listener when (and only if) the transaction commits.
  c.prepare("revocation_notify", "SELECT pg_notify('" + std::string(kRevocationChannel) + "', $1)");
  c.prepare("token_revoke_of",
            "UPDATE api_tokens SET revoke_time = septa_ts($2) WHERE principal = $1 AND revoke_time IS NULL");
  c.prepare("token_cap_of",
            "UPDATE api_tokens SET expire_time = least(coalesce(expire_time, 'infinity'),"
            " create_time + make_interval(secs => $2)) WHERE principal = $1 AND revoke_time IS NULL");
  c.prepare("audit_append",
            "INSERT INTO audit_log (time, principal, action, resource, old_etag, new_etag, request_id)"
            " VALUES (septa_ts($1), $2, $3, $4, $5, $6, $7)");
  c.prepare("audit_list", "SELECT " + audit +
                              " FROM audit_log WHERE ($1 = '' OR resource = $1) ORDER BY time DESC, id DESC LIMIT $2");
  c.prepare("idempotency_get", "SELECT " + idempotency + " FROM idempotency_keys WHERE principal = $1 AND key = $2");
  c.prepare("idempotency_insert",
            "INSERT INTO idempotency_keys (principal, key, request_hash, resource, create_time)"
            " VALUES ($1, $2, $3, $4, septa_ts($5))");
  c.prepare("idempotency_delete", "DELETE FROM idempotency_keys WHERE principal = $1 AND key = $2");
  // Oldest first through the create_time index, in bounded batches.
  c.prepare("idempotency_delete_before",
            "DELETE FROM idempotency_keys WHERE (principal, key) IN (SELECT principal, key FROM idempotency_keys"
            " WHERE create_time < septa_ts($1) ORDER BY create_time LIMIT $2)");
}

Status PgTx::Failed(const std::exception& e) {
  TranslatedError error = TranslateDatabaseError(e);
  if (error.retry || error.connection_broken) fatal_ = error;
  return error.status;
}

template <typename T, typename F>
Result<T> PgTx::Read(F&& read) {
  if (single_read_ && reads_++ > 0) {
    needs_snapshot_ = true;
    fatal_ = TranslatedError{Aborted("a second read needs a snapshot transaction"), true, false};
    return fatal_->status;
  }
  try {
    return read();
  } catch (const std::exception& e) {
    return Failed(e);
  }
}

template <typename F>
Result<std::size_t> PgTx::Write(F&& write) {
  if (mode_ == core::TxMode::kReadOnly) return FailedPrecondition("write in a read-only transaction");
  try {
    tx_.exec0("SAVEPOINT septa_write");
  } catch (const std::exception& e) {
    return Failed(e);
  }
  try {
    const pqxx::result result = write(tx_);
    tx_.exec0("RELEASE SAVEPOINT septa_write");
    return result.affected_rows();
  } catch (const std::exception& e) {
    const Status failed = Failed(e);
    if (!fatal_) {
      try {
        tx_.exec0("ROLLBACK TO SAVEPOINT septa_write");
      } catch (const std::exception& rollback_error) {
        // Only for its effect: a broken rollback makes the transaction fatal;
        // the caller is told about the write that failed first.
        (void)Failed(rollback_error);
      }
    }
    return failed;
  }
}

Result<std::vector<TrustTier>> PgTx::ListTrustTiers() {
  return Read<std::vector<TrustTier>>([&] {
    std::vector<TrustTier> tiers;
    for (const auto& row : tx_.exec_prepared("tier_list")) tiers.push_back(TierOf(row));
    return tiers;
  });
}

Result<TrustTier> PgTx::GetTrustTier(const std::string& name) {
  return Read<TrustTier>([&]() -> Result<TrustTier> {
    const auto rows = tx_.exec_prepared("tier_get", name);
    if (rows.empty()) return NotFound("trust tier \"" + name + "\" not found");
    return TierOf(rows[0]);
  });
}

Result<Tenant> PgTx::GetTenant(const std::string& name) {
  return Read<Tenant>([&]() -> Result<Tenant> {
    const auto rows = tx_.exec_prepared("tenant_get", name);
    if (rows.empty()) return NotFound("tenant \"" + name + "\" not found");
    return TenantOf(rows[0]);
  });
}

Result<std::vector<Tenant>> PgTx::ListTenants(const core::TenantQuery& query) {
  SEPTA_RETURN_IF_ERROR(CheckLimit(query.limit));
  return Read<std::vector<Tenant>>([&] {
    std::vector<Tenant> tenants;
    const char* tier = query.trust_tier ? query.trust_tier->c_str() : nullptr;
    for (const auto& row :
         tx_.exec_prepared("tenant_list", tier, LabelsJson(query.labels), query.after_name, query.limit)) {
      tenants.push_back(TenantOf(row));
    }
    return tenants;
  });
}

Status PgTx::InsertTenant(const Tenant& t) {
  return ToStatus(Write([&](pqxx::transaction_base& w) {
    return w.exec_prepared("tenant_insert", t.name, t.display_name, t.trust_tier, LabelsJson(t.labels),
                           StateText(t.state), Micros(t.create_time), Micros(t.update_time), t.version);
  }));
}

Status PgTx::VersionMismatch(const std::string& name, std::int64_t expected_version) {
  auto current = Read<std::int64_t>([&]() -> Result<std::int64_t> {
    const auto rows = tx_.exec_prepared("tenant_version", name);
    if (rows.empty()) return NotFound("tenant \"" + name + "\" not found");
    return rows[0][0].as<std::int64_t>();
  });
  if (!current.ok()) return current.status();
  return Aborted("tenant \"" + name + "\" is at version " + std::to_string(*current) + ", not " +
                 std::to_string(expected_version));
}

Status PgTx::UpdateTenant(const Tenant& t, std::int64_t expected_version) {
  auto updated = Write([&](pqxx::transaction_base& w) {
    return w.exec_prepared("tenant_update", t.name, t.display_name, t.trust_tier, LabelsJson(t.labels),
                           StateText(t.state), Micros(t.update_time), t.version, expected_version);
  });
  if (!updated.ok()) return updated.status();
  return *updated == 1 ? Status::Ok() : VersionMismatch(t.name, expected_version);
}

Status PgTx::DeleteTenant(const std::string& name, std::int64_t expected_version) {
  auto deleted =
      Write([&](pqxx::transaction_base& w) { return w.exec_prepared("tenant_delete", name, expected_version); });
  if (!deleted.ok()) return deleted.status();
  return *deleted == 1 ? Status::Ok() : VersionMismatch(name, expected_version);
}

Status PgTx::InsertToken(const ApiToken& t) {
  const NullableMicros expire(t.expire_time), revoke(t.revoke_time);
  return ToStatus(Write([&](pqxx::transaction_base& w) {
    return w.exec_prepared("token_insert", t.id, t.principal, RoleText(t.role), t.secret_hash, t.description,
                           Micros(t.create_time), expire.param(), revoke.param());
  }));
}

Result<ApiToken> PgTx::GetToken(const std::string& id) {
  return Read<ApiToken>([&]() -> Result<ApiToken> {
    const auto rows = tx_.exec_prepared("token_get", id);
    if (rows.empty()) return NotFound("API token \"" + id + "\" not found");
    return TokenOf(rows[0]);
  });
}

Result<std::vector<ApiToken>> PgTx::ListTokens(const std::string& principal) {
  return Read<std::vector<ApiToken>>([&] {
    std::vector<ApiToken> tokens;
    for (const auto& row : tx_.exec_prepared("token_list", principal)) tokens.push_back(TokenOf(row));
    return tokens;
  });
}

Status PgTx::RevokeToken(const std::string& id, TimePoint when) {
  auto revoked = Write([&](pqxx::transaction_base& w) {
    pqxx::result r = w.exec_prepared("token_revoke", id, Micros(when));
    w.exec_prepared("revocation_notify", RevocationPayload({id, ""}));
    return r;
  });
  if (!revoked.ok()) return revoked.status();
  return *revoked == 1 ? Status::Ok() : NotFound("API token \"" + id + "\" not found");
}

Status PgTx::RevokeTokensOf(const std::string& principal, TimePoint when) {
  return ToStatus(Write([&](pqxx::transaction_base& w) {
    pqxx::result r = w.exec_prepared("token_revoke_of", principal, Micros(when));
    w.exec_prepared("revocation_notify", RevocationPayload({"", principal}));
    return r;
  }));
}

Status PgTx::CapTokenLifetimes(const std::string& principal, std::chrono::seconds max_lifetime) {
  return ToStatus(Write([&](pqxx::transaction_base& w) {
    pqxx::result r = w.exec_prepared("token_cap_of", principal, static_cast<std::int64_t>(max_lifetime.count()));
    w.exec_prepared("revocation_notify", RevocationPayload({"", principal}));
    return r;
  }));
}

Status PgTx::AppendAudit(const AuditRecord& r) {
  return ToStatus(Write([&](pqxx::transaction_base& w) {
    return w.exec_prepared("audit_append", Micros(r.time), r.principal, r.action, r.resource, r.old_etag, r.new_etag,
                           r.request_id);
  }));
}

Result<std::vector<AuditRecord>> PgTx::ListAudit(const std::string& resource, int limit) {
  SEPTA_RETURN_IF_ERROR(CheckLimit(limit));
  return Read<std::vector<AuditRecord>>([&] {
    std::vector<AuditRecord> records;
    for (const auto& row : tx_.exec_prepared("audit_list", resource, limit)) records.push_back(AuditOf(row));
    return records;
  });
}

Result<IdempotencyRecord> PgTx::GetIdempotency(const std::string& principal, const std::string& key) {
  return Read<IdempotencyRecord>([&]() -> Result<IdempotencyRecord> {
    const auto rows = tx_.exec_prepared("idempotency_get", principal, key);
    if (rows.empty()) return NotFound("idempotency key \"" + key + "\" not found");
    return IdempotencyOf(rows[0]);
  });
}

Status PgTx::InsertIdempotency(const IdempotencyRecord& r) {
  return ToStatus(Write([&](pqxx::transaction_base& w) {
    return w.exec_prepared("idempotency_insert", r.principal, r.key, r.request_hash, r.resource, Micros(r.create_time));
  }));
}

Status PgTx::DeleteIdempotency(const std::string& principal, const std::string& key) {
  return ToStatus(
      Write([&](pqxx::transaction_base& w) { return w.exec_prepared("idempotency_delete", principal, key); }));
}

Result<int> PgTx::DeleteIdempotencyBefore(TimePoint cutoff, int limit) {
  SEPTA_RETURN_IF_ERROR(CheckLimit(limit));
  auto deleted = Write(
      [&](pqxx::transaction_base& w) { return w.exec_prepared("idempotency_delete_before", Micros(cutoff), limit); });
  SEPTA_RETURN_IF_ERROR(deleted);
  return static_cast<int>(*deleted);
}

}  // namespace septa::store
