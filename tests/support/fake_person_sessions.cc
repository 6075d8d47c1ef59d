#include "tests/support/fake_person_sessions.h"

#include <algorithm>
#include <regex>
#include <tuple>

namespace septa::core {

namespace {

constexpr char kSha256Hex[] = "must be a SHA-256 digest in lower-case hex";

bool IsSha256Hex(const std::string& text) {
  static const std::regex kSha256("^[0-9a-f]{64}$");
  return std::regex_match(text, kSha256);
}

bool BytesBetween(const std::string& text, std::size_t min, std::size_t max) {
  return text.size() >= min && text.size() <= max;
}

// The CHECK constraints of migrations/0028_person_sessions.sql on
// person_sign_ins, with PgStore's field names.
Status CheckSignInRow(const PendingSignIn& s) {
  static const std::regex kCodeVerifier("^[A-Za-z0-9._~-]{43,128}$");
  if (!IsSha256Hex(s.state_hash)) return InvalidField("state_hash", kSha256Hex);
  if (!BytesBetween(s.issuer, 1, 2048)) return InvalidField("issuer", "must be 1-2048 bytes");
  if (!IsSha256Hex(s.browser_hash)) return InvalidField("browser_hash", kSha256Hex);
  if (!std::regex_match(s.code_verifier, kCodeVerifier)) {
    return InvalidField("code_verifier", "must be 43-128 characters of A-Z, a-z, 0-9, '-', '.', '_' and '~'");
  }
  if (!BytesBetween(s.nonce, 1, 256)) return InvalidField("nonce", "must be 1-256 bytes");
  if (s.client.size() > 64) return InvalidField("client", "must be at most 64 bytes");
  if (!s.return_to.starts_with('/') || s.return_to.size() > 2048) {
    return InvalidField("return_to", "must be a path of the portal: '/' first, at most 2048 bytes");
  }
  if (s.expire_time <= s.create_time) return InvalidField("expire_time", "must be after create_time");
  return Status::Ok();
}

// The same on person_sessions.
Status CheckSessionRow(const PersonSession& s) {
  static const std::regex kId("^[0-9a-f]{16}$");
  if (!std::regex_match(s.id, kId)) return InvalidField("id", "must be 16 lower-case hex digits");
  if (!IsSha256Hex(s.secret_hash)) return InvalidField("secret_hash", kSha256Hex);
  if (!BytesBetween(s.issuer, 1, 2048)) return InvalidField("issuer", "must be 1-2048 bytes");
  if (!IsMemberName(s.user)) {
    return InvalidField("user",
                        "must be 1-256 bytes of one line of printable text: no control or bidi formatting characters");
  }
  if (s.groups.size() > kMaxMemberGroups || !std::all_of(s.groups.begin(), s.groups.end(), IsMemberName)) {
    return InvalidField("groups",
                        "must be at most 1000 names of 1-256 bytes of one line of printable text: no control or bidi "
                        "formatting characters");
  }
  if (!BytesBetween(s.id_token, 1, 65536)) return InvalidField("id_token", "must be 1-65536 bytes");
  if (s.refresh_token.size() > 65536) return InvalidField("refresh_token", "must be at most 65536 bytes");
  if (s.version < 0) return InvalidField("version", "must not be negative");
  if (s.expire_time <= s.create_time) return InvalidField("expire_time", "must be after create_time");
  return Status::Ok();
}

std::string SessionNoun(const std::string& id) { return "portal session \"" + id + "\""; }

bool IsLiveAt(const PersonSession& s, TimePoint now) { return !s.revoke_time && s.expire_time > now; }

}  // namespace

Status FakePersonSessions::InsertSignIn(const PendingSignIn& sign_in) {
  SEPTA_RETURN_IF_ERROR(w_.CheckWritable());
  SEPTA_RETURN_IF_ERROR(CheckSignInRow(sign_in));
  PendingSignIn row = sign_in;
  row.create_time = Truncated(row.create_time);
  row.expire_time = Truncated(row.expire_time);
  if (!w_.s.person_sign_ins.emplace(row.state_hash, std::move(row)).second) {
    return AlreadyExists("a sign-in with this state is already pending");
  }
  return Status::Ok();
}

Result<PendingSignIn> FakePersonSessions::TakeSignIn(const std::string& state_hash) {
  SEPTA_RETURN_IF_ERROR(w_.CheckWritable());
  auto node = w_.s.person_sign_ins.extract(state_hash);
  if (node.empty()) return NotFound("no sign-in is pending with this state");
  return std::move(node.mapped());
}

Result<int> FakePersonSessions::CountSignIns(TimePoint now) {
  return static_cast<int>(std::count_if(w_.s.person_sign_ins.begin(), w_.s.person_sign_ins.end(),
                                        [&](const auto& entry) { return entry.second.expire_time > now; }));
}

Result<int> FakePersonSessions::CountSignInsFrom(const std::string& client, TimePoint now) {
  return static_cast<int>(std::count_if(w_.s.person_sign_ins.begin(), w_.s.person_sign_ins.end(), [&](const auto& e) {
    return e.second.client == client && e.second.expire_time > now;
  }));
}

Status FakePersonSessions::Insert(const PersonSession& session) {
  SEPTA_RETURN_IF_ERROR(w_.CheckWritable());
  SEPTA_RETURN_IF_ERROR(CheckSessionRow(session));
  PersonSession row = session;
  row.identity_expire_time = Truncated(row.identity_expire_time);
  row.create_time = Truncated(row.create_time);
  row.expire_time = Truncated(row.expire_time);
  row.revoke_time = Truncated(row.revoke_time);
  if (!w_.s.person_sessions.emplace(row.id, std::move(row)).second) {
    return AlreadyExists("a portal session with this id already exists");
  }
  return Status::Ok();
}

Result<PersonSession> FakePersonSessions::Get(const std::string& id) {
  const auto it = w_.s.person_sessions.find(id);
  if (it == w_.s.person_sessions.end()) return NotFound(SessionNoun(id) + " not found");
  return it->second;
}

Result<std::vector<PersonSession>> FakePersonSessions::ListLive(const std::string& issuer, const std::string& user,
                                                                TimePoint now) {
  std::vector<PersonSession> sessions;
  for (const auto& [id, s] : w_.s.person_sessions) {
    if (s.issuer == issuer && s.user == user && IsLiveAt(s, now)) sessions.push_back(s);
  }
  std::sort(sessions.begin(), sessions.end(), [](const PersonSession& a, const PersonSession& b) {
    return std::tie(a.create_time, a.id) < std::tie(b.create_time, b.id);
  });
  return sessions;
}

Status FakePersonSessions::UpdateIdentity(const PersonSession& session, std::int64_t expected_version) {
  SEPTA_RETURN_IF_ERROR(w_.CheckWritable());
  const auto it = w_.s.person_sessions.find(session.id);
  if (it == w_.s.person_sessions.end()) return NotFound(SessionNoun(session.id) + " not found");
  if (it->second.version != expected_version) {
    return Aborted(SessionNoun(session.id) + " is at version " + std::to_string(it->second.version) + ", not " +
                   std::to_string(expected_version));
  }
  // As the UPDATE: the identity, the tokens, the expiry and the version.
  PersonSession row = it->second;
  row.groups = session.groups;
  row.identity_expire_time = Truncated(session.identity_expire_time);
  row.id_token = session.id_token;
  row.refresh_token = session.refresh_token;
  row.expire_time = Truncated(session.expire_time);
  row.version = expected_version + 1;
  SEPTA_RETURN_IF_ERROR(CheckSessionRow(row));
  it->second = std::move(row);
  return Status::Ok();
}

Status FakePersonSessions::Revoke(const std::string& id, TimePoint when) {
  SEPTA_RETURN_IF_ERROR(w_.CheckWritable());
  const auto it = w_.s.person_sessions.find(id);
  if (it == w_.s.person_sessions.end()) return NotFound(SessionNoun(id) + " not found");
  if (!it->second.revoke_time) {  // the first revocation stands, and is told once (migrations/0028's trigger)
    it->second.revoke_time = Truncated(when);
    w_.revocations.push_back({id, ""});
  }
  return Status::Ok();
}

Result<int> FakePersonSessions::DeleteDead(TimePoint now, TimePoint dead_before, int limit) {
  SEPTA_RETURN_IF_ERROR(w_.CheckWritable());
  if (limit < 1) return InvalidField("limit", "must be positive");
  // Each in key order, as PostgreSQL's LIMIT takes them.
  int sign_ins = 0;
  for (auto it = w_.s.person_sign_ins.begin(); it != w_.s.person_sign_ins.end() && sign_ins < limit;) {
    if (it->second.expire_time < now) {
      it = w_.s.person_sign_ins.erase(it);
      ++sign_ins;
    } else {
      ++it;
    }
  }
  int sessions = 0;
  for (auto it = w_.s.person_sessions.begin(); it != w_.s.person_sessions.end() && sessions < limit;) {
    const PersonSession& s = it->second;
    if (std::min(s.revoke_time.value_or(TimePoint::max()), s.expire_time) < dead_before) {
      // An unrevoked session's deletion is told (the trigger); a revoked one's was at its revocation.
      if (!s.revoke_time) w_.revocations.push_back({s.id, ""});
      it = w_.s.person_sessions.erase(it);
      ++sessions;
    } else {
      ++it;
    }
  }
  return sign_ins + sessions;
}

}  // namespace septa::core
