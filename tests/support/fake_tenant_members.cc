#include "tests/support/fake_tenant_members.h"

#include <algorithm>
#include <set>

namespace septa::core {

namespace {

std::string MemberNoun(const std::string& tenant, MemberKind kind, const std::string& name) {
  return "member \"" + MemberText(kind, name) + "\" of tenant \"" + tenant + "\"";
}

// The CHECK constraints of migrations/0026_tenant_members.sql, with PgStore's field names.
Status CheckMemberRow(const TenantMember& m) {
  if (!IsMemberName(m.name)) {
    return InvalidField("name",
                        "must be 1-256 bytes of one line of printable text: no control or bidi formatting characters");
  }
  if (m.version <= 0) return InvalidField("version", "must be positive");
  return Status::Ok();
}

}  // namespace

FakeStore::State::MemberKey MemberKeyOf(const std::string& tenant, MemberKind kind, const std::string& name) {
  return {tenant, std::string(MemberKindName(kind)), name};
}

Result<std::vector<TenantMember>> FakeTenantMembers::List(const std::string& tenant) {
  std::vector<TenantMember> members;
  for (auto it = w_.s.tenant_members.lower_bound({tenant, "", ""});
       it != w_.s.tenant_members.end() && std::get<0>(it->first) == tenant; ++it) {
    members.push_back(it->second);
  }
  return members;
}

Result<TenantMember> FakeTenantMembers::Get(const std::string& tenant, MemberKind kind, const std::string& name) {
  const auto it = w_.s.tenant_members.find(MemberKeyOf(tenant, kind, name));
  if (it == w_.s.tenant_members.end()) return NotFound(MemberNoun(tenant, kind, name) + " not found");
  return it->second;
}

Status FakeTenantMembers::Insert(const TenantMember& m) {
  SEPTA_RETURN_IF_ERROR(w_.CheckWritable());
  SEPTA_RETURN_IF_ERROR(CheckMemberRow(m));
  if (!w_.s.tenants.contains(m.tenant)) return NotFound("no such tenant");
  TenantMember row = m;
  row.create_time = Truncated(m.create_time);
  row.update_time = Truncated(m.update_time);
  if (!w_.s.tenant_members.emplace(MemberKeyOf(m.tenant, m.kind, m.name), std::move(row)).second) {
    return AlreadyExists("the tenant already has this member");
  }
  w_.revocations.push_back({"", "tenant:" + m.tenant});  // as migrations/0027's trigger
  return Status::Ok();
}

Status FakeTenantMembers::Update(const TenantMember& m, std::int64_t expected_version) {
  SEPTA_RETURN_IF_ERROR(w_.CheckWritable());
  const auto it = w_.s.tenant_members.find(MemberKeyOf(m.tenant, m.kind, m.name));
  if (it == w_.s.tenant_members.end()) return NotFound(MemberNoun(m.tenant, m.kind, m.name) + " not found");
  if (it->second.version != expected_version) {
    return Aborted(MemberNoun(m.tenant, m.kind, m.name) + " is at version " + std::to_string(it->second.version) +
                   ", not " + std::to_string(expected_version));
  }
  SEPTA_RETURN_IF_ERROR(CheckMemberRow(m));
  // As the UPDATE: the role, the update time and the version.
  it->second.role = m.role;
  it->second.update_time = Truncated(m.update_time);
  it->second.version = m.version;
  w_.revocations.push_back({"", "tenant:" + m.tenant});
  return Status::Ok();
}

Status FakeTenantMembers::Delete(const std::string& tenant, MemberKind kind, const std::string& name,
                                 std::int64_t expected_version) {
  SEPTA_RETURN_IF_ERROR(w_.CheckWritable());
  const auto it = w_.s.tenant_members.find(MemberKeyOf(tenant, kind, name));
  if (it == w_.s.tenant_members.end()) return NotFound(MemberNoun(tenant, kind, name) + " not found");
  if (it->second.version != expected_version) {
    return Aborted(MemberNoun(tenant, kind, name) + " is at version " + std::to_string(it->second.version) + ", not " +
                   std::to_string(expected_version));
  }
  w_.s.tenant_members.erase(it);
  w_.revocations.push_back({"", "tenant:" + tenant});
  return Status::Ok();
}

Result<std::vector<TenantMember>> FakeTenantMembers::ListFor(const std::string& user,
                                                             const std::vector<std::string>& groups) {
  if (groups.size() > kMaxMemberGroups) {
    return InvalidField(
        "groups", "must be at most " + std::to_string(kMaxMemberGroups) + ", got " + std::to_string(groups.size()));
  }
  const std::set<std::string> wanted_groups(groups.begin(), groups.end());
  std::vector<TenantMember> members;  // in key order: (tenant, kind, name)
  for (const auto& entry : w_.s.tenant_members) {
    const TenantMember& m = entry.second;
    const bool wanted = m.kind == MemberKind::kUser ? m.name == user : wanted_groups.contains(m.name);
    if (wanted) members.push_back(m);
  }
  return members;
}

}  // namespace septa::core
