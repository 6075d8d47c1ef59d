// core::TenantMemberRepository on migrations/0026_tenant_members.sql.
#include <nlohmann/json.hpp>

#include "services/store/pg_repositories.h"
#include "services/store/pg_values.h"

namespace septa::store {
namespace {

using core::MemberKind;
using core::TenantMember;

constexpr char kMemberColumns[] =
    "tenant, kind, name, role, septa_micros(create_time), septa_micros(update_time), version";

TenantMember MemberOf(const pqxx::row& r) {
  const std::string role = r[3].as<std::string>();
  return {.tenant = r[0].as<std::string>(),
          .kind = r[1].as<std::string>() == "group" ? MemberKind::kGroup : MemberKind::kUser,
          .name = r[2].as<std::string>(),
          .role = role == "owner"    ? core::MemberRole::kOwner
                  : role == "editor" ? core::MemberRole::kEditor
                                     : core::MemberRole::kViewer,
          .create_time = FromMicros(r[4].as<std::int64_t>()),
          .update_time = FromMicros(r[5].as<std::int64_t>()),
          .version = r[6].as<std::int64_t>()};
}

std::string MemberNoun(const std::string& tenant, MemberKind kind, const std::string& name) {
  return "member \"" + core::MemberText(kind, name) + "\" of tenant \"" + tenant + "\"";
}

std::vector<TenantMember> MembersOf(const pqxx::result& rows) {
  std::vector<TenantMember> members;
  members.reserve(rows.size());
  for (const auto& row : rows) members.push_back(MemberOf(row));
  return members;
}

}  // namespace

void PgTenantMembers::Prepare(pqxx::connection& c) {
  const std::string columns = kMemberColumns;
  c.prepare("tenant_member_list", "SELECT " + columns + " FROM tenant_members WHERE tenant = $1 ORDER BY kind, name");
  c.prepare("tenant_member_get",
            "SELECT " + columns + " FROM tenant_members WHERE tenant = $1 AND kind = $2 AND name = $3");
  c.prepare("tenant_member_insert",
            "INSERT INTO tenant_members (tenant, kind, name, role, create_time, update_time, version)"
            " VALUES ($1, $2, $3, $4, septa_ts($5), septa_ts($6), $7)");
  c.prepare("tenant_member_update",
            "UPDATE tenant_members SET role = $4, update_time = septa_ts($5), version = $6"
            " WHERE tenant = $1 AND kind = $2 AND name = $3 AND version = $7");
  c.prepare("tenant_member_delete",
            "DELETE FROM tenant_members WHERE tenant = $1 AND kind = $2 AND name = $3 AND version = $4");
  // Both arms are lookups of tenant_members_by_identity. The groups come as
  // a JSON array: any text arrives whole, whatever characters it holds.
  c.prepare("tenant_member_list_for",
            "SELECT " + columns +
                " FROM tenant_members WHERE (kind = 'user' AND name = $1)"
                " OR (kind = 'group' AND name IN (SELECT jsonb_array_elements_text($2::jsonb)))"
                " ORDER BY tenant, kind, name");
}

Result<std::vector<TenantMember>> PgTenantMembers::List(const std::string& tenant) {
  return work_.Read<std::vector<TenantMember>>(
      [&](pqxx::transaction_base& t) { return MembersOf(t.exec_prepared("tenant_member_list", tenant)); });
}

Result<TenantMember> PgTenantMembers::Get(const std::string& tenant, MemberKind kind, const std::string& name) {
  return work_.Read<TenantMember>([&](pqxx::transaction_base& t) -> Result<TenantMember> {
    const auto rows = t.exec_prepared("tenant_member_get", tenant, std::string(core::MemberKindName(kind)), name);
    if (rows.empty()) return NotFound(MemberNoun(tenant, kind, name) + " not found");
    return MemberOf(rows[0]);
  });
}

Status PgTenantMembers::Insert(const TenantMember& m) {
  return ToStatus(work_.Write([&](pqxx::transaction_base& w) {
    return w.exec_prepared("tenant_member_insert", m.tenant, std::string(core::MemberKindName(m.kind)), m.name,
                           std::string(core::MemberRoleName(m.role)), Micros(m.create_time), Micros(m.update_time),
                           m.version);
  }));
}

Status PgTenantMembers::VersionMismatch(const std::string& tenant, MemberKind kind, const std::string& name,
                                        std::int64_t expected_version) {
  SEPTA_ASSIGN_OR_RETURN(const TenantMember current, Get(tenant, kind, name));
  return Aborted(MemberNoun(tenant, kind, name) + " is at version " + std::to_string(current.version) + ", not " +
                 std::to_string(expected_version));
}

Status PgTenantMembers::Update(const TenantMember& m, std::int64_t expected_version) {
  auto updated = work_.Write([&](pqxx::transaction_base& w) {
    return w.exec_prepared("tenant_member_update", m.tenant, std::string(core::MemberKindName(m.kind)), m.name,
                           std::string(core::MemberRoleName(m.role)), Micros(m.update_time), m.version,
                           expected_version);
  });
  if (!updated.ok()) return updated.status();
  return *updated == 1 ? Status::Ok() : VersionMismatch(m.tenant, m.kind, m.name, expected_version);
}

Status PgTenantMembers::Delete(const std::string& tenant, MemberKind kind, const std::string& name,
                               std::int64_t expected_version) {
  auto deleted = work_.Write([&](pqxx::transaction_base& w) {
    return w.exec_prepared("tenant_member_delete", tenant, std::string(core::MemberKindName(kind)), name,
                           expected_version);
  });
  if (!deleted.ok()) return deleted.status();
  return *deleted == 1 ? Status::Ok() : VersionMismatch(tenant, kind, name, expected_version);
}

Result<std::vector<TenantMember>> PgTenantMembers::ListFor(const std::string& user,
                                                           const std::vector<std::string>& groups) {
  if (groups.size() > core::kMaxMemberGroups) {
    return InvalidField("groups", "must be at most " + std::to_string(core::kMaxMemberGroups) + ", got " +
                                      std::to_string(groups.size()));
  }
  // A name no member can have matches nothing; left out, it cannot be text
  // PostgreSQL refuses (invalid UTF-8, NUL) either.
  nlohmann::json names = nlohmann::json::array();
  for (const std::string& group : groups) {
    if (core::IsMemberName(group)) names.push_back(group);
  }
  const std::string user_name = core::IsMemberName(user) ? user : "";
  return work_.Read<std::vector<TenantMember>>([&](pqxx::transaction_base& t) {
    return MembersOf(t.exec_prepared("tenant_member_list_for", user_name, names.dump()));
  });
}

}  // namespace septa::store
