#include "services/store/pg_repositories.h"
#include "services/store/pg_values.h"

namespace septa::store {
namespace {

using core::AuditRecord;

constexpr char kAuditColumns[] =
    "id, septa_micros(time), principal, action, resource, old_etag, new_etag, request_id, surface, detail";
AuditRecord AuditOf(const pqxx::row& r) {
  return {.id = r[0].as<std::int64_t>(),
          .time = FromMicros(r[1].as<std::int64_t>()),
          .principal = r[2].as<std::string>(),
          .action = r[3].as<std::string>(),
          .resource = r[4].as<std::string>(),
          .old_etag = r[5].as<std::string>(),
          .new_etag = r[6].as<std::string>(),
          .request_id = r[7].as<std::string>(),
          .surface = r[8].as<std::string>(),
          .detail = r[9].as<std::string>()};
}

}  // namespace

void PgAuditLog::Prepare(pqxx::connection& c) {
  c.prepare("audit_append",
            "INSERT INTO audit_log (time, principal, action, resource, old_etag, new_etag, request_id, surface, detail)"
            " VALUES (septa_ts($1), $2, $3, $4, $5, $6, $7, $8, $9)");
  // Two statements, not one with "$1 = '' OR": a generic plan of that
  // cannot use audit_log_resource_time and walks the whole log by time.
  c.prepare("audit_list",
            "SELECT " + std::string(kAuditColumns) + " FROM audit_log ORDER BY time DESC, id DESC LIMIT $1");
  c.prepare("audit_list_resource", "SELECT " + std::string(kAuditColumns) +
                                       " FROM audit_log WHERE resource = $1 ORDER BY time DESC, id DESC LIMIT $2");
}

Status PgAuditLog::Append(const AuditRecord& r) {
  return ToStatus(work_.Write([&](pqxx::transaction_base& w) {
    return w.exec_prepared("audit_append", Micros(r.time), r.principal, r.action, r.resource, r.old_etag, r.new_etag,
                           r.request_id, r.surface, r.detail);
  }));
}

Result<std::vector<AuditRecord>> PgAuditLog::List(const std::string& resource, int limit) {
  SEPTA_RETURN_IF_ERROR(CheckLimit(limit));
  return work_.Read<std::vector<AuditRecord>>([&](pqxx::transaction_base& t) {
    std::vector<AuditRecord> records;
    const pqxx::result rows = resource.empty() ? t.exec_prepared("audit_list", limit)
                                               : t.exec_prepared("audit_list_resource", resource, limit);
    for (const auto& row : rows) records.push_back(AuditOf(row));
    return records;
  });
}

}  // namespace septa::store
