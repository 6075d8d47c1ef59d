#include <nlohmann/json.hpp>

#include "services/store/pg_repositories.h"
#include "services/store/pg_values.h"

namespace septa::store {
namespace {

using core::ApplySet;
using core::ApplySetMember;

constexpr char kMemberColumns[] =
    "kind, resource, set_tenant, set_name, array_to_string(declared, E'\\n'), encode(intent, 'hex')";

constexpr char kSetColumns[] =
    "tenant, name, revision, source, applied_by, septa_micros(apply_time), on_drift,"
    " array_to_string(protected_kinds, E'\\n')";

core::DriftPolicy DriftPolicyOf(const std::string& text) {
  if (text == "revert") return core::DriftPolicy::kRevert;
  if (text == "lock") return core::DriftPolicy::kLock;
  return core::DriftPolicy::kReport;  // the column's CHECK admits only these three
}

ApplySet SetOfRow(const pqxx::row& r) {
  return ApplySet{.tenant = r[0].as<std::string>(),
                  .name = r[1].as<std::string>(),
                  .revision = r[2].as<std::int64_t>(),
                  .source = r[3].as<std::string>(),
                  .applied_by = r[4].as<std::string>(),
                  .apply_time = FromMicros(r[5].as<std::int64_t>()),
                  .on_drift = DriftPolicyOf(r[6].as<std::string>()),
                  .protected_kinds = SplitLines(r[7].as<std::string>())};
}

ApplySetMember MemberOfRow(const pqxx::row& r) {
  return {.kind = r[0].as<std::string>(),
          .resource = r[1].as<std::string>(),
          .set_tenant = r[2].as<std::string>(),
          .set_name = r[3].as<std::string>(),
          .declared = SplitLines(r[4].as<std::string>()),
          .intent = FromHex(r[5].as<std::string>())};
}

}  // namespace

void PgApplySets::Prepare(pqxx::connection& c) {
  const std::string member_columns = kMemberColumns;
  const std::string set_columns = kSetColumns;
  c.prepare("apply_set_get", "SELECT " + set_columns + " FROM apply_sets WHERE tenant = $1 AND name = $2");
  c.prepare("apply_set_list", "SELECT " + set_columns + " FROM apply_sets WHERE tenant = $1 ORDER BY name");
  c.prepare("apply_set_list_all", "SELECT " + set_columns + " FROM apply_sets ORDER BY tenant, name");
  c.prepare("apply_set_put",
            "INSERT INTO apply_sets (tenant, name, revision, source, applied_by, apply_time, on_drift, protected_kinds)"
            " VALUES ($1, $2, $3, $4, $5, septa_ts($6), $7,"
            " CASE WHEN $8 = '' THEN '{}'::text[] ELSE string_to_array($8, E'\\n') END)"
            " ON CONFLICT (tenant, name) DO UPDATE SET"
            " revision = excluded.revision, source = excluded.source, applied_by = excluded.applied_by,"
            " apply_time = excluded.apply_time, on_drift = excluded.on_drift,"
            " protected_kinds = excluded.protected_kinds");
  c.prepare("apply_set_members",
            "SELECT " + member_columns +
                " FROM apply_set_members WHERE set_tenant = $1 AND set_name = $2 ORDER BY kind, resource");
  c.prepare("apply_set_member_of",
            "SELECT " + member_columns + " FROM apply_set_members WHERE kind = $1 AND resource = $2");
  // Every row in one statement, from one jsonb array (libpqxx 6 has no
  // array parameters): an apply of 1,000 members is one round trip, not
  // 1,000 under a savepoint each.
  c.prepare("apply_set_members_put",
            "INSERT INTO apply_set_members (kind, resource, set_tenant, set_name, declared, intent)"
            " SELECT m.kind, m.resource, m.set_tenant, m.set_name, m.declared, decode(m.intent, 'hex')"
            " FROM jsonb_to_recordset($1::jsonb) AS m(kind text, resource text, set_tenant text, set_name text,"
            " declared text[], intent text)"
            " ON CONFLICT (kind, resource) DO UPDATE SET set_tenant = excluded.set_tenant,"
            " set_name = excluded.set_name, declared = excluded.declared, intent = excluded.intent");
  c.prepare("apply_set_member_delete", "DELETE FROM apply_set_members WHERE kind = $1 AND resource = $2");
  c.prepare("apply_set_note_drift", "SELECT pg_notify('septa_applyset_drift', $1 || '/' || $2 || '/' || $3)");
}

Result<std::optional<ApplySet>> PgApplySets::Get(const std::string& tenant, const std::string& name) {
  return work_.Read<std::optional<ApplySet>>([&](pqxx::transaction_base& t) -> std::optional<ApplySet> {
    const auto rows = t.exec_prepared("apply_set_get", tenant, name);
    if (rows.empty()) return std::nullopt;
    return SetOfRow(rows[0]);
  });
}

Result<std::vector<ApplySet>> PgApplySets::List(const std::string& tenant) {
  return work_.Read<std::vector<ApplySet>>([&](pqxx::transaction_base& t) {
    std::vector<ApplySet> sets;
    for (const auto& row : t.exec_prepared("apply_set_list", tenant)) sets.push_back(SetOfRow(row));
    return sets;
  });
}

Status PgApplySets::Put(const ApplySet& s) {
  return ToStatus(work_.Write([&](pqxx::transaction_base& w) {
    return w.exec_prepared("apply_set_put", s.tenant, s.name, s.revision, s.source, s.applied_by, Micros(s.apply_time),
                           std::string(core::DriftPolicyName(s.on_drift)), JoinLines(s.protected_kinds));
  }));
}

Result<std::vector<ApplySet>> PgApplySets::ListAll() {
  return work_.Read<std::vector<ApplySet>>([&](pqxx::transaction_base& t) {
    std::vector<ApplySet> sets;
    for (const auto& row : t.exec_prepared("apply_set_list_all")) sets.push_back(SetOfRow(row));
    return sets;
  });
}

Result<std::vector<ApplySetMember>> PgApplySets::Members(const std::string& tenant, const std::string& name) {
  return work_.Read<std::vector<ApplySetMember>>([&](pqxx::transaction_base& t) {
    std::vector<ApplySetMember> members;
    for (const auto& row : t.exec_prepared("apply_set_members", tenant, name)) members.push_back(MemberOfRow(row));
    return members;
  });
}

Result<std::optional<ApplySetMember>> PgApplySets::MemberOf(const std::string& kind, const std::string& resource) {
  return work_.Read<std::optional<ApplySetMember>>([&](pqxx::transaction_base& t) -> std::optional<ApplySetMember> {
    const auto rows = t.exec_prepared("apply_set_member_of", kind, resource);
    if (rows.empty()) return std::nullopt;
    return MemberOfRow(rows[0]);
  });
}

Status PgApplySets::PutMembers(const std::vector<ApplySetMember>& members) {
  nlohmann::json rows = nlohmann::json::array();
  for (const ApplySetMember& m : members) {
    rows.push_back({{"kind", m.kind},
                    {"resource", m.resource},
                    {"set_tenant", m.set_tenant},
                    {"set_name", m.set_name},
                    {"declared", m.declared},
                    {"intent", ToHex(m.intent)}});
  }
  return ToStatus(
      work_.Write([&](pqxx::transaction_base& w) { return w.exec_prepared("apply_set_members_put", rows.dump()); }));
}

Status PgApplySets::DeleteMember(const std::string& kind, const std::string& resource) {
  return ToStatus(work_.Write(
      [&](pqxx::transaction_base& w) { return w.exec_prepared("apply_set_member_delete", kind, resource); }));
}

Status PgApplySets::NoteDrift(const std::string& tenant, const std::string& name, std::string_view surface) {
  return ToStatus(work_.Write([&](pqxx::transaction_base& w) {
    return w.exec_prepared("apply_set_note_drift", tenant, name, std::string(surface));
  }));
}

}  // namespace septa::store
