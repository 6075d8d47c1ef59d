#include "services/store/pg_repositories.h"
#include "services/store/pg_values.h"

namespace septa::store {
namespace {

using core::Tenant;
using core::TenantState;

const char* StateText(TenantState state) { return state == TenantState::kSuspended ? "suspended" : "active"; }
TenantState StateOf(const std::string& text) {
  return text == "suspended" ? TenantState::kSuspended : TenantState::kActive;
}

constexpr char kTenantColumns[] =
    "name, display_name, trust_tier, labels::text, state, septa_micros(create_time), septa_micros(update_time), "
    "version, quota_gpu_milli, quota_cpu_milli, quota_memory_mib, quota_pods, quota_vclusters";
Tenant TenantOf(const pqxx::row& r) {
  return {r[0].as<std::string>(),
          r[1].as<std::string>(),
          r[2].as<std::string>(),
          LabelsOf(r[3].as<std::string>()),
          StateOf(r[4].as<std::string>()),
          {OptionalInt64(r[8]), OptionalInt64(r[9]), OptionalInt64(r[10]), OptionalInt64(r[11]), OptionalInt64(r[12])},
          FromMicros(r[5].as<std::int64_t>()),
          FromMicros(r[6].as<std::int64_t>()),
          r[7].as<std::int64_t>()};
}

// The quota as the five nullable parameters of tenant_insert and tenant_update (NULL: no limit).
struct QuotaParams {
  explicit QuotaParams(const tenancy::TenantQuota& q)
      : gpu_milli(q.gpu_milli),
        cpu_milli(q.cpu_milli),
        memory_mib(q.memory_mib),
        pods(q.pods),
        vclusters(q.vclusters) {}
  NullableInt64 gpu_milli, cpu_milli, memory_mib, pods, vclusters;
};

}  // namespace

void PgTenants::Prepare(pqxx::connection& c) {
  const std::string tenant = kTenantColumns;
  c.prepare("tenant_get", "SELECT " + tenant + " FROM tenants WHERE name = $1");
  c.prepare("tenant_list", "SELECT " + tenant +
                               " FROM tenants WHERE ($1::text IS NULL OR trust_tier = $1::text)"
                               " AND labels @> $2::jsonb AND name > $3 ORDER BY name LIMIT $4");
  c.prepare("tenant_insert",
            "INSERT INTO tenants (name, display_name, trust_tier, labels, state, create_time, update_time, version,"
            " quota_gpu_milli, quota_cpu_milli, quota_memory_mib, quota_pods, quota_vclusters)"
            " VALUES ($1, $2, $3, $4::jsonb, $5, septa_ts($6), septa_ts($7), $8, $9, $10, $11, $12, $13)");
  c.prepare("tenant_update",
            "UPDATE tenants SET display_name = $2, trust_tier = $3, labels = $4::jsonb, state = $5,"
            " update_time = septa_ts($6), version = $7, quota_gpu_milli = $9, quota_cpu_milli = $10,"
            " quota_memory_mib = $11, quota_pods = $12, quota_vclusters = $13 WHERE name = $1 AND version = $8");
  c.prepare("tenant_delete", "DELETE FROM tenants WHERE name = $1 AND version = $2");
  c.prepare("tenant_version", "SELECT version FROM tenants WHERE name = $1");
}

Result<Tenant> PgTenants::Get(const std::string& name) {
  return work_.Read<Tenant>([&](pqxx::transaction_base& t) -> Result<Tenant> {
    const auto rows = t.exec_prepared("tenant_get", name);
    if (rows.empty()) return NotFound("tenant \"" + name + "\" not found");
    return TenantOf(rows[0]);
  });
}

Result<std::vector<Tenant>> PgTenants::List(const core::TenantQuery& query) {
  SEPTA_RETURN_IF_ERROR(CheckLimit(query.limit));
  return work_.Read<std::vector<Tenant>>([&](pqxx::transaction_base& t) {
    std::vector<Tenant> tenants;
    const char* tier = query.trust_tier ? query.trust_tier->c_str() : nullptr;
    for (const auto& row :
         t.exec_prepared("tenant_list", tier, LabelsJson(query.labels), query.after_name, query.limit)) {
      tenants.push_back(TenantOf(row));
    }
    return tenants;
  });
}

Status PgTenants::Insert(const Tenant& t) {
  const QuotaParams q(t.quota);
  return ToStatus(work_.Write([&](pqxx::transaction_base& w) {
    return w.exec_prepared("tenant_insert", t.name, t.display_name, t.trust_tier, LabelsJson(t.labels),
                           StateText(t.state), Micros(t.create_time), Micros(t.update_time), t.version,
                           q.gpu_milli.param(), q.cpu_milli.param(), q.memory_mib.param(), q.pods.param(),
                           q.vclusters.param());
  }));
}

Status PgTenants::VersionMismatch(const std::string& name, std::int64_t expected_version) {
  auto current = work_.Read<std::int64_t>([&](pqxx::transaction_base& t) -> Result<std::int64_t> {
    const auto rows = t.exec_prepared("tenant_version", name);
    if (rows.empty()) return NotFound("tenant \"" + name + "\" not found");
    return rows[0][0].as<std::int64_t>();
  });
  if (!current.ok()) return current.status();
  return Aborted("tenant \"" + name + "\" is at version " + std::to_string(*current) + ", not " +
                 std::to_string(expected_version));
}

Status PgTenants::Update(const Tenant& t, std::int64_t expected_version) {
  const QuotaParams q(t.quota);
  auto updated = work_.Write([&](pqxx::transaction_base& w) {
    return w.exec_prepared("tenant_update", t.name, t.display_name, t.trust_tier, LabelsJson(t.labels),
                           StateText(t.state), Micros(t.update_time), t.version, expected_version, q.gpu_milli.param(),
                           q.cpu_milli.param(), q.memory_mib.param(), q.pods.param(), q.vclusters.param());
  });
  if (!updated.ok()) return updated.status();
  return *updated == 1 ? Status::Ok() : VersionMismatch(t.name, expected_version);
}

Status PgTenants::Delete(const std::string& name, std::int64_t expected_version) {
  auto deleted =
      work_.Write([&](pqxx::transaction_base& w) { return w.exec_prepared("tenant_delete", name, expected_version); });
  if (!deleted.ok()) return deleted.status();
  return *deleted == 1 ? Status::Ok() : VersionMismatch(name, expected_version);
}

}  // namespace septa::store
