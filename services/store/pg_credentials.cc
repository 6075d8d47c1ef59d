#include "services/store/pg_repositories.h"

#include "services/store/pg_values.h"
#include "tenancy/virtual_cluster_ref.h"

namespace septa::store {
namespace {

using core::VclusterCredential;

constexpr char kCredentialColumns[] =
    "tenant, vcluster, serial, common_name, array_to_string(groups, E'\\n'), role, issued_by,"
    " septa_micros(issue_time), septa_micros(expire_time), septa_micros(revoke_time)";
VclusterCredential CredentialOf(const pqxx::row& r) {
  return {r[0].as<std::string>(),
          r[1].as<std::string>(),
          r[2].as<std::string>(),
          r[3].as<std::string>(),
          SplitLines(r[4].as<std::string>()),
          r[5].as<std::string>(),
          r[6].as<std::string>(),
          FromMicros(r[7].as<std::int64_t>()),
          FromMicros(r[8].as<std::int64_t>()),
          OptionalTime(r[9])};
}

std::string CredentialNameOf(const std::string& tenant, const std::string& vcluster, const std::string& serial) {
  return "credential \"" + serial + "\" of virtual cluster \"" + tenancy::VirtualClusterText(tenant, vcluster) + "\"";
}

}  // namespace

void PgCredentials::Prepare(pqxx::connection& c) {
  const std::string columns = kCredentialColumns;
  c.prepare("credential_insert",
            "INSERT INTO vcluster_credentials (tenant, vcluster, serial, common_name, groups, role, issued_by,"
            " issue_time, expire_time) VALUES ($1, $2, $3, $4, string_to_array($5, E'\\n'), $6, $7, septa_ts($8),"
            " septa_ts($9))");
  c.prepare("credential_get",
            "SELECT " + columns + " FROM vcluster_credentials WHERE tenant = $1 AND vcluster = $2 AND serial = $3");
  c.prepare("credential_list", "SELECT " + columns +
                                   " FROM vcluster_credentials WHERE tenant = $1 AND ($2 = '' OR vcluster = $2)"
                                   " AND (vcluster, serial) > ($3, $4)"
                                   " AND ($6::bigint IS NULL OR (revoke_time IS NULL AND expire_time > septa_ts($6)"
                                   " AND expire_time <= septa_ts($7)))"
                                   " ORDER BY vcluster, serial LIMIT $5");
  // Revoking twice keeps the first time; the first one is told on
  // septa_credentials by the trigger of migrations/0012_credentials_notify.sql.
  c.prepare("credential_revoke",
            "UPDATE vcluster_credentials SET revoke_time = coalesce(revoke_time, septa_ts($4))"
            " WHERE tenant = $1 AND vcluster = $2 AND serial = $3");
}

Status PgCredentials::Insert(const VclusterCredential& c) {
  return ToStatus(work_.Write([&](pqxx::transaction_base& w) {
    return w.exec_prepared("credential_insert", c.tenant, c.vcluster, c.serial, c.common_name, JoinLines(c.groups),
                           c.role, c.issued_by, Micros(c.issue_time), Micros(c.expire_time));
  }));
}

Result<VclusterCredential> PgCredentials::Get(const std::string& tenant, const std::string& vcluster,
                                              const std::string& serial) {
  return work_.Read<VclusterCredential>([&](pqxx::transaction_base& t) -> Result<VclusterCredential> {
    const auto rows = t.exec_prepared("credential_get", tenant, vcluster, serial);
    if (rows.empty()) return NotFound(CredentialNameOf(tenant, vcluster, serial) + " not found");
    return CredentialOf(rows[0]);
  });
}

Result<std::vector<VclusterCredential>> PgCredentials::List(const core::CredentialQuery& q) {
  return work_.Read<std::vector<VclusterCredential>>([&](pqxx::transaction_base& t) {
    std::vector<VclusterCredential> rows;
    const NullableInt64 now = NullableMicros(q.expiring ? std::optional(q.expiring->now) : std::nullopt);
    const NullableInt64 before = NullableMicros(q.expiring ? std::optional(q.expiring->before) : std::nullopt);
    const std::string& after_vcluster = q.vcluster.empty() ? q.after_vcluster : q.vcluster;
    for (const auto& row : t.exec_prepared("credential_list", q.tenant, q.vcluster, after_vcluster, q.after_serial,
                                           q.limit, now.param(), before.param())) {
      rows.push_back(CredentialOf(row));
    }
    return rows;
  });
}

Result<VclusterCredential> PgCredentials::Revoke(const std::string& tenant, const std::string& vcluster,
                                                 const std::string& serial, TimePoint when) {
  auto revoked = work_.Write([&](pqxx::transaction_base& w) {
    return w.exec_prepared("credential_revoke", tenant, vcluster, serial, Micros(when));
  });
  if (!revoked.ok()) return revoked.status();
  if (*revoked == 0) return NotFound(CredentialNameOf(tenant, vcluster, serial) + " not found");
  return Get(tenant, vcluster, serial);
}

}  // namespace septa::store
