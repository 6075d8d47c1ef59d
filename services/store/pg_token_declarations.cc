// core::TokenDeclarationRepository on migrations/0022_token_declarations.sql.
#include "services/store/pg_repositories.h"
#include "services/store/pg_values.h"

namespace septa::store {
namespace {

using core::TokenDeclaration;

constexpr char kDeclarationColumns[] =
    "name, principal, role, ttl_seconds, sink_namespace, sink_name, sink_key, version, septa_micros(create_time),"
    " septa_micros(update_time), token_id, septa_micros(token_expire_time), token_version, pending_token_id,"
    " deliveries";

TokenDeclaration DeclarationOf(const pqxx::row& r) {
  return {.name = r[0].as<std::string>(),
          .principal = r[1].as<std::string>(),
          .role = r[2].as<std::string>() == "owner" ? core::Role::kOwner : core::Role::kViewer,
          .ttl_seconds = r[3].as<std::int64_t>(),
          .sink = {.ns = r[4].as<std::string>(), .name = r[5].as<std::string>(), .key = r[6].as<std::string>()},
          .version = r[7].as<std::int64_t>(),
          .create_time = FromMicros(r[8].as<std::int64_t>()),
          .update_time = FromMicros(r[9].as<std::int64_t>()),
          .token_id = r[10].as<std::string>(),
          .token_expire_time = OptionalTime(r[11]),
          .token_version = r[12].as<std::int64_t>(),
          .pending_token_id = r[13].as<std::string>(),
          .deliveries = r[14].as<std::int64_t>()};
}

}  // namespace

void PgTokenDeclarations::Prepare(pqxx::connection& c) {
  const std::string columns = kDeclarationColumns;
  c.prepare("token_declaration_get", "SELECT " + columns + " FROM token_declarations WHERE name = $1");
  c.prepare("token_declaration_list", "SELECT " + columns + " FROM token_declarations ORDER BY name");
  c.prepare("token_declaration_insert",
            "INSERT INTO token_declarations (name, principal, role, ttl_seconds, sink_namespace, sink_name, sink_key,"
            " version, create_time, update_time, token_id, token_expire_time, token_version, pending_token_id,"
            " deliveries) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, septa_ts($9), septa_ts($10), $11,"
            " septa_ts($12::bigint), $13, $14, $15)");
  c.prepare("token_declaration_update",
            "UPDATE token_declarations SET principal = $2, role = $3, ttl_seconds = $4, sink_namespace = $5,"
            " sink_name = $6, sink_key = $7, version = $8, update_time = septa_ts($9), token_id = $10,"
            " token_expire_time = septa_ts($11::bigint), token_version = $12, pending_token_id = $13,"
            " deliveries = $14 WHERE name = $1 AND version = $15");
  c.prepare("token_declaration_delete", "DELETE FROM token_declarations WHERE name = $1");
}

Result<std::optional<TokenDeclaration>> PgTokenDeclarations::Get(const std::string& name) {
  return work_.Read<std::optional<TokenDeclaration>>([&](pqxx::transaction_base& t) -> std::optional<TokenDeclaration> {
    const auto rows = t.exec_prepared("token_declaration_get", name);
    if (rows.empty()) return std::nullopt;
    return DeclarationOf(rows[0]);
  });
}

Result<std::vector<TokenDeclaration>> PgTokenDeclarations::List() {
  return work_.Read<std::vector<TokenDeclaration>>([&](pqxx::transaction_base& t) {
    std::vector<TokenDeclaration> out;
    for (const auto& row : t.exec_prepared("token_declaration_list")) out.push_back(DeclarationOf(row));
    return out;
  });
}

Status PgTokenDeclarations::Insert(const TokenDeclaration& d) {
  return ToStatus(work_.Write([&](pqxx::transaction_base& w) {
    return w.exec_prepared(
        "token_declaration_insert", d.name, d.principal, std::string(d.role == core::Role::kOwner ? "owner" : "viewer"),
        d.ttl_seconds, d.sink.ns, d.sink.name, d.sink.key, d.version, Micros(d.create_time), Micros(d.update_time),
        d.token_id, NullableMicros(d.token_expire_time).param(), d.token_version, d.pending_token_id, d.deliveries);
  }));
}

Status PgTokenDeclarations::Update(const TokenDeclaration& d, std::int64_t expected_version) {
  auto updated = work_.Write([&](pqxx::transaction_base& w) {
    return w.exec_prepared("token_declaration_update", d.name, d.principal,
                           std::string(d.role == core::Role::kOwner ? "owner" : "viewer"), d.ttl_seconds, d.sink.ns,
                           d.sink.name, d.sink.key, d.version, Micros(d.update_time), d.token_id,
                           NullableMicros(d.token_expire_time).param(), d.token_version, d.pending_token_id,
                           d.deliveries, expected_version);
  });
  if (!updated.ok()) return updated.status();
  if (*updated == 1) return Status::Ok();
  SEPTA_ASSIGN_OR_RETURN(const std::optional<TokenDeclaration> now, Get(d.name));
  if (!now) return NotFound("api token declaration \"" + d.name + "\" not found");
  return Aborted("api token declaration \"" + d.name + "\" is at version " + std::to_string(now->version) + ", not " +
                 std::to_string(expected_version));
}

Status PgTokenDeclarations::Delete(const std::string& name) {
  return ToStatus(
      work_.Write([&](pqxx::transaction_base& w) { return w.exec_prepared("token_declaration_delete", name); }));
}

}  // namespace septa::store
