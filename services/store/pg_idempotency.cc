#include "services/store/pg_repositories.h"
#include "services/store/pg_values.h"

namespace septa::store {
namespace {

using core::IdempotencyRecord;

constexpr char kIdempotencyColumns[] = "principal, key, request_hash, resource, septa_micros(create_time)";
IdempotencyRecord IdempotencyOf(const pqxx::row& r) {
  return {r[0].as<std::string>(), r[1].as<std::string>(), r[2].as<std::string>(), r[3].as<std::string>(),
          FromMicros(r[4].as<std::int64_t>())};
}

}  // namespace

void PgIdempotency::Prepare(pqxx::connection& c) {
  const std::string idempotency = kIdempotencyColumns;
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

Result<IdempotencyRecord> PgIdempotency::Get(const std::string& principal, const std::string& key) {
  return work_.Read<IdempotencyRecord>([&](pqxx::transaction_base& t) -> Result<IdempotencyRecord> {
    const auto rows = t.exec_prepared("idempotency_get", principal, key);
    if (rows.empty()) return NotFound("idempotency key \"" + key + "\" not found");
    return IdempotencyOf(rows[0]);
  });
}

Status PgIdempotency::Insert(const IdempotencyRecord& r) {
  return ToStatus(work_.Write([&](pqxx::transaction_base& w) {
    return w.exec_prepared("idempotency_insert", r.principal, r.key, r.request_hash, r.resource, Micros(r.create_time));
  }));
}

Status PgIdempotency::Delete(const std::string& principal, const std::string& key) {
  return ToStatus(
      work_.Write([&](pqxx::transaction_base& w) { return w.exec_prepared("idempotency_delete", principal, key); }));
}

Result<int> PgIdempotency::DeleteBefore(TimePoint cutoff, int limit) {
  SEPTA_RETURN_IF_ERROR(CheckLimit(limit));
  auto deleted = work_.Write(
      [&](pqxx::transaction_base& w) { return w.exec_prepared("idempotency_delete_before", Micros(cutoff), limit); });
  SEPTA_RETURN_IF_ERROR(deleted);
  return static_cast<int>(*deleted);
}

}  // namespace septa::store
