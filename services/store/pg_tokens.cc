#include "services/store/pg_repositories.h"
#include "services/store/pg_values.h"
#include "services/store/revocation_listener.h"

namespace septa::store {
namespace {

using core::ApiToken;
using core::Role;

using core::TokenKind;

const char* RoleText(Role role) { return role == Role::kViewer ? "viewer" : "owner"; }
Role RoleOf(const std::string& text) { return text == "viewer" ? Role::kViewer : Role::kOwner; }

// api_tokens.kind (migrations/0019).
const char* KindText(TokenKind kind) {
  switch (kind) {
    case TokenKind::kApi: return "api";
    case TokenKind::kSession: return "session";
    case TokenKind::kSignIn: return "sign_in";
  }
  return "api";
}
TokenKind KindOf(const std::string& text) {
  if (text == "session") return TokenKind::kSession;
  if (text == "sign_in") return TokenKind::kSignIn;
  return TokenKind::kApi;
}

constexpr char kTokenColumns[] =
    "id, principal, role, secret_hash, description, septa_micros(create_time), septa_micros(expire_time), "
    "septa_micros(revoke_time), kind, coalesce(parent_id, ''), array_to_string(apply_sets, E'\\n')";
ApiToken TokenOf(const pqxx::row& r) {
  return {r[0].as<std::string>(),
          r[1].as<std::string>(),
          RoleOf(r[2].as<std::string>()),
          r[3].as<std::string>(),
          r[4].as<std::string>(),
          FromMicros(r[5].as<std::int64_t>()),
          OptionalTime(r[6]),
          OptionalTime(r[7]),
          KindOf(r[8].as<std::string>()),
          r[9].as<std::string>(),
          SplitLines(r[10].as<std::string>())};
}

}  // namespace

void PgTokens::Prepare(pqxx::connection& c) {
  const std::string token = kTokenColumns;
  c.prepare("token_insert",
            "INSERT INTO api_tokens (id, principal, role, secret_hash, description, create_time, expire_time,"
            " revoke_time, kind, parent_id, apply_sets) VALUES ($1, $2, $3, $4, $5, septa_ts($6), septa_ts($7::bigint),"
            " septa_ts($8::bigint), $9, nullif($10, ''), CASE WHEN $11 = '' THEN '{}'::text[] ELSE "
            "string_to_array($11, E'\\n') END)");
  c.prepare("token_get", "SELECT " + token + " FROM api_tokens WHERE id = $1");
  c.prepare(
      "token_list",
      "SELECT " + token + " FROM api_tokens WHERE ($1 = '' OR principal = $1) AND kind = $2 ORDER BY create_time, id");
  // Revoking twice keeps the first revocation time.
  c.prepare("token_revoke", "UPDATE api_tokens SET revoke_time = coalesce(revoke_time, septa_ts($2)) WHERE id = $1");
  // Delivered to every listener when (and only if) the transaction commits.
  c.prepare("revocation_notify", "SELECT pg_notify('" + std::string(kRevocationChannel) + "', $1)");
  c.prepare("token_revoke_of",
            "UPDATE api_tokens SET revoke_time = septa_ts($2) WHERE principal = $1 AND revoke_time IS NULL");
  c.prepare("token_count_live",
            "SELECT count(*) FROM api_tokens WHERE principal = $1 AND kind = 'api' AND revoke_time IS NULL"
            " AND (expire_time IS NULL OR expire_time > septa_ts($2))");
  // When a row died: its revocation or its expiry, whichever came first.
  const std::string died = "least(coalesce(revoke_time, 'infinity'), coalesce(expire_time, 'infinity'))";
  // Sessions and sign-in codes first (they reference their API token):
  // those dead themselves, and those of an API token deleted next.
  c.prepare("token_delete_dead_children", "DELETE FROM api_tokens WHERE kind <> 'api' AND (" + died +
                                              " < septa_ts($1) OR parent_id IN"
                                              " (SELECT id FROM api_tokens WHERE kind = 'api' AND " +
                                              died + " < septa_ts($1)))");
  c.prepare("token_delete_dead",
            "DELETE FROM api_tokens WHERE id IN (SELECT id FROM api_tokens WHERE kind = 'api' AND " + died +
                " < septa_ts($1) ORDER BY id LIMIT $2)");
  c.prepare("token_cap_of",
            "UPDATE api_tokens SET expire_time = least(coalesce(expire_time, 'infinity'),"
            " create_time + make_interval(secs => $2)) WHERE principal = $1 AND revoke_time IS NULL");
}

Status PgTokens::Insert(const ApiToken& t) {
  const NullableInt64 expire = NullableMicros(t.expire_time), revoke = NullableMicros(t.revoke_time);
  return ToStatus(work_.Write([&](pqxx::transaction_base& w) {
    return w.exec_prepared("token_insert", t.id, t.principal, RoleText(t.role), t.secret_hash, t.description,
                           Micros(t.create_time), expire.param(), revoke.param(), KindText(t.kind), t.parent_id,
                           JoinLines(t.apply_sets));
  }));
}

Result<ApiToken> PgTokens::Get(const std::string& id) {
  return work_.Read<ApiToken>([&](pqxx::transaction_base& t) -> Result<ApiToken> {
    const auto rows = t.exec_prepared("token_get", id);
    if (rows.empty()) return NotFound("API token \"" + id + "\" not found");
    return TokenOf(rows[0]);
  });
}

Result<std::vector<ApiToken>> PgTokens::List(const std::string& principal, TokenKind kind) {
  return work_.Read<std::vector<ApiToken>>([&](pqxx::transaction_base& t) {
    std::vector<ApiToken> tokens;
    for (const auto& row : t.exec_prepared("token_list", principal, KindText(kind))) tokens.push_back(TokenOf(row));
    return tokens;
  });
}

Status PgTokens::Revoke(const std::string& id, TimePoint when) {
  auto revoked = work_.Write([&](pqxx::transaction_base& w) {
    pqxx::result r = w.exec_prepared("token_revoke", id, Micros(when));
    w.exec_prepared("revocation_notify", RevocationPayload({id, ""}));
    return r;
  });
  if (!revoked.ok()) return revoked.status();
  return *revoked == 1 ? Status::Ok() : NotFound("API token \"" + id + "\" not found");
}

Status PgTokens::RevokeAllOf(const std::string& principal, TimePoint when) {
  return ToStatus(work_.Write([&](pqxx::transaction_base& w) {
    pqxx::result r = w.exec_prepared("token_revoke_of", principal, Micros(when));
    w.exec_prepared("revocation_notify", RevocationPayload({"", principal}));
    return r;
  }));
}

Result<int> PgTokens::CountLive(const std::string& principal, TimePoint now) {
  return work_.Read<int>([&](pqxx::transaction_base& t) {
    return t.exec_prepared1("token_count_live", principal, Micros(now))[0].as<int>();
  });
}

Result<int> PgTokens::DeleteDead(TimePoint dead_before, int limit) {
  // Both statements under Write's one savepoint: the API tokens' count is the second's.
  SEPTA_ASSIGN_OR_RETURN(const std::size_t deleted, work_.Write([&](pqxx::transaction_base& w) {
    w.exec_prepared("token_delete_dead_children", Micros(dead_before));
    return w.exec_prepared("token_delete_dead", Micros(dead_before), limit);
  }));
  return static_cast<int>(deleted);
}

Status PgTokens::CapLifetimes(const std::string& principal, std::chrono::seconds max_lifetime) {
  return ToStatus(work_.Write([&](pqxx::transaction_base& w) {
    pqxx::result r = w.exec_prepared("token_cap_of", principal, static_cast<std::int64_t>(max_lifetime.count()));
    w.exec_prepared("revocation_notify", RevocationPayload({"", principal}));
    return r;
  }));
}

}  // namespace septa::store
