// core::PersonSessionRepository on migrations/0028_person_sessions.sql. A
// session's end is told to every replica by that migration's trigger, so
// no statement here sends the NOTIFY itself.
#include <nlohmann/json.hpp>

#include "services/store/pg_repositories.h"
#include "services/store/pg_values.h"

namespace septa::store {
namespace {

using core::PendingSignIn;
using core::PersonSession;

constexpr char kSignInColumns[] =
    "state_hash, issuer, browser_hash, code_verifier, nonce, return_to, client, septa_micros(create_time), "
    "septa_micros(expire_time)";

PendingSignIn SignInOf(const pqxx::row& r) {
  return {.state_hash = r[0].as<std::string>(),
          .issuer = r[1].as<std::string>(),
          .browser_hash = r[2].as<std::string>(),
          .code_verifier = r[3].as<std::string>(),
          .nonce = r[4].as<std::string>(),
          .return_to = r[5].as<std::string>(),
          .client = r[6].as<std::string>(),
          .create_time = FromMicros(r[7].as<std::int64_t>()),
          .expire_time = FromMicros(r[8].as<std::int64_t>())};
}

// The groups cross as a JSON array both ways: any text arrives whole, in
// its order, whatever characters it holds.
constexpr char kSessionColumns[] =
    "id, secret_hash, issuer, username, array_to_json(groups)::text, septa_micros(identity_expire_time), id_token, "
    "refresh_token, version, septa_micros(create_time), septa_micros(expire_time), septa_micros(revoke_time)";
constexpr char kGroupsParameter[] =
    "ARRAY(SELECT g FROM jsonb_array_elements_text($5::jsonb) WITH ORDINALITY AS e(g, i) ORDER BY i)";

PersonSession SessionOf(const pqxx::row& r) {
  return {.id = r[0].as<std::string>(),
          .secret_hash = r[1].as<std::string>(),
          .issuer = r[2].as<std::string>(),
          .user = r[3].as<std::string>(),
          .groups = nlohmann::json::parse(r[4].as<std::string>()).get<std::vector<std::string>>(),
          .identity_expire_time = FromMicros(r[5].as<std::int64_t>()),
          .id_token = r[6].as<std::string>(),
          .refresh_token = r[7].as<std::string>(),
          .version = r[8].as<std::int64_t>(),
          .create_time = FromMicros(r[9].as<std::int64_t>()),
          .expire_time = FromMicros(r[10].as<std::int64_t>()),
          .revoke_time = OptionalTime(r[11])};
}

// A group that is not UTF-8 cannot be text in PostgreSQL (nor JSON).
Result<std::string> GroupsJson(const std::vector<std::string>& groups) {
  try {
    return nlohmann::json(groups).dump();
  } catch (const nlohmann::json::type_error&) {
    return InvalidField("groups", "must be UTF-8 text");
  }
}

std::string SessionNoun(const std::string& id) { return "portal session \"" + id + "\""; }

}  // namespace

void PgPersonSessions::Prepare(pqxx::connection& c) {
  const std::string sign_in = kSignInColumns, session = kSessionColumns, groups = kGroupsParameter;
  c.prepare("person_sign_in_insert",
            "INSERT INTO person_sign_ins (state_hash, issuer, browser_hash, code_verifier, nonce, return_to, client,"
            " create_time, expire_time) VALUES ($1, $2, $3, $4, $5, $6, $7, septa_ts($8), septa_ts($9))");
  c.prepare("person_sign_in_take", "DELETE FROM person_sign_ins WHERE state_hash = $1 RETURNING " + sign_in);
  c.prepare("person_sign_in_count", "SELECT count(*) FROM person_sign_ins WHERE expire_time > septa_ts($1)");
  c.prepare("person_sign_in_count_from",
            "SELECT count(*) FROM person_sign_ins WHERE client = $1 AND expire_time > septa_ts($2)");
  c.prepare("person_session_insert",
            "INSERT INTO person_sessions (id, secret_hash, issuer, username, groups, identity_expire_time, id_token,"
            " refresh_token, version, create_time, expire_time, revoke_time) VALUES ($1, $2, $3, $4, " +
                groups + ", septa_ts($6), $7, $8, $9, septa_ts($10), septa_ts($11), septa_ts($12::bigint))");
  c.prepare("person_session_get", "SELECT " + session + " FROM person_sessions WHERE id = $1");
  // A lookup of person_sessions_live.
  c.prepare("person_session_list_live",
            "SELECT " + session +
                " FROM person_sessions WHERE issuer = $1 AND username = $2 AND revoke_time IS NULL"
                " AND expire_time > septa_ts($3) ORDER BY create_time, id");
  c.prepare("person_session_update_identity",
            "UPDATE person_sessions SET groups = " + groups +
                ", identity_expire_time = septa_ts($2), id_token = $3, refresh_token = $4,"
                " expire_time = septa_ts($6), version = $7 + 1 WHERE id = $1 AND version = $7");
  // Revoking twice keeps the first revocation time (and tells it once).
  c.prepare("person_session_revoke",
            "UPDATE person_sessions SET revoke_time = coalesce(revoke_time, septa_ts($2)) WHERE id = $1");
  c.prepare("person_sign_in_delete_expired",
            "DELETE FROM person_sign_ins WHERE state_hash IN (SELECT state_hash FROM person_sign_ins"
            " WHERE expire_time < septa_ts($1) ORDER BY state_hash LIMIT $2)");
  // When a session died: its revocation or its expiry, whichever came first.
  c.prepare("person_session_delete_dead",
            "DELETE FROM person_sessions WHERE id IN (SELECT id FROM person_sessions"
            " WHERE least(coalesce(revoke_time, 'infinity'), expire_time) < septa_ts($1) ORDER BY id LIMIT $2)");
}

Status PgPersonSessions::InsertSignIn(const PendingSignIn& s) {
  return ToStatus(work_.Write([&](pqxx::transaction_base& w) {
    return w.exec_prepared("person_sign_in_insert", s.state_hash, s.issuer, s.browser_hash, s.code_verifier, s.nonce,
                           s.return_to, s.client, Micros(s.create_time), Micros(s.expire_time));
  }));
}

Result<PendingSignIn> PgPersonSessions::TakeSignIn(const std::string& state_hash) {
  std::optional<PendingSignIn> taken;
  SEPTA_RETURN_IF_ERROR(work_.Write([&](pqxx::transaction_base& w) {
    pqxx::result r = w.exec_prepared("person_sign_in_take", state_hash);
    if (!r.empty()) taken = SignInOf(r[0]);
    return r;
  }));
  if (!taken) return NotFound("no sign-in is pending with this state");
  return *std::move(taken);
}

Result<int> PgPersonSessions::CountSignIns(TimePoint now) {
  return work_.Read<int>(
      [&](pqxx::transaction_base& t) { return t.exec_prepared1("person_sign_in_count", Micros(now))[0].as<int>(); });
}

Result<int> PgPersonSessions::CountSignInsFrom(const std::string& client, TimePoint now) {
  return work_.Read<int>([&](pqxx::transaction_base& t) {
    return t.exec_prepared1("person_sign_in_count_from", client, Micros(now))[0].as<int>();
  });
}

Status PgPersonSessions::Insert(const PersonSession& s) {
  SEPTA_ASSIGN_OR_RETURN(const std::string groups, GroupsJson(s.groups));
  const NullableInt64 revoke = NullableMicros(s.revoke_time);
  return ToStatus(work_.Write([&](pqxx::transaction_base& w) {
    return w.exec_prepared("person_session_insert", s.id, s.secret_hash, s.issuer, s.user, groups,
                           Micros(s.identity_expire_time), s.id_token, s.refresh_token, s.version,
                           Micros(s.create_time), Micros(s.expire_time), revoke.param());
  }));
}

Result<PersonSession> PgPersonSessions::Get(const std::string& id) {
  return work_.Read<PersonSession>([&](pqxx::transaction_base& t) -> Result<PersonSession> {
    const auto rows = t.exec_prepared("person_session_get", id);
    if (rows.empty()) return NotFound(SessionNoun(id) + " not found");
    return SessionOf(rows[0]);
  });
}

Result<std::vector<PersonSession>> PgPersonSessions::ListLive(const std::string& issuer, const std::string& user,
                                                              TimePoint now) {
  return work_.Read<std::vector<PersonSession>>([&](pqxx::transaction_base& t) {
    std::vector<PersonSession> sessions;
    for (const auto& row : t.exec_prepared("person_session_list_live", issuer, user, Micros(now))) {
      sessions.push_back(SessionOf(row));
    }
    return sessions;
  });
}

Status PgPersonSessions::UpdateIdentity(const PersonSession& s, std::int64_t expected_version) {
  SEPTA_ASSIGN_OR_RETURN(const std::string groups, GroupsJson(s.groups));
  SEPTA_ASSIGN_OR_RETURN(const std::size_t updated, work_.Write([&](pqxx::transaction_base& w) {
    // $5 is the groups, as in the insert.
    return w.exec_prepared("person_session_update_identity", s.id, Micros(s.identity_expire_time), s.id_token,
                           s.refresh_token, groups, Micros(s.expire_time), expected_version);
  }));
  if (updated == 1) return Status::Ok();
  // Matched nothing: gone, or at another version.
  SEPTA_ASSIGN_OR_RETURN(const PersonSession current, Get(s.id));
  return Aborted(SessionNoun(s.id) + " is at version " + std::to_string(current.version) + ", not " +
                 std::to_string(expected_version));
}

Status PgPersonSessions::Revoke(const std::string& id, TimePoint when) {
  SEPTA_ASSIGN_OR_RETURN(const std::size_t revoked, work_.Write([&](pqxx::transaction_base& w) {
    return w.exec_prepared("person_session_revoke", id, Micros(when));
  }));
  return revoked == 1 ? Status::Ok() : NotFound(SessionNoun(id) + " not found");
}

Result<int> PgPersonSessions::DeleteDead(TimePoint now, TimePoint dead_before, int limit) {
  if (limit < 1) return InvalidField("limit", "must be positive");
  std::size_t sign_ins = 0;
  SEPTA_ASSIGN_OR_RETURN(const std::size_t sessions, work_.Write([&](pqxx::transaction_base& w) {
    sign_ins = w.exec_prepared("person_sign_in_delete_expired", Micros(now), limit).affected_rows();
    return w.exec_prepared("person_session_delete_dead", Micros(dead_before), limit);
  }));
  return static_cast<int>(sign_ins + sessions);
}

}  // namespace septa::store
