#include "tests/support/fake_apply_sets.h"

#include <algorithm>

namespace septa::core {

Result<std::optional<ApplySet>> FakeApplySets::Get(const std::string& tenant, const std::string& name) {
  const auto it = w_.s.apply_sets.find({tenant, name});
  if (it == w_.s.apply_sets.end()) return std::optional<ApplySet>();
  return std::optional<ApplySet>(it->second);
}

Status FakeApplySets::Put(const ApplySet& set) {
  SEPTA_RETURN_IF_ERROR(w_.CheckWritable());
  if (!IsDnsLabel(set.name, 63)) return InvalidField("apply_set", "must be a DNS label");
  if (set.revision <= 0) return InvalidField("revision", "must be positive");
  ApplySet stored = set;
  stored.apply_time = Truncated(set.apply_time);
  w_.s.apply_sets[{set.tenant, set.name}] = std::move(stored);
  return Status::Ok();
}

Result<std::vector<ApplySet>> FakeApplySets::List(const std::string& tenant) {
  std::vector<ApplySet> sets;  // the map's (tenant, name) order
  for (const auto& [key, set] : w_.s.apply_sets) {
    if (set.tenant == tenant) sets.push_back(set);
  }
  return sets;
}

Result<std::vector<ApplySet>> FakeApplySets::ListAll() {
  std::vector<ApplySet> sets;
  for (const auto& [key, set] : w_.s.apply_sets) sets.push_back(set);
  return sets;
}

Result<std::vector<ApplySetMember>> FakeApplySets::Members(const std::string& tenant, const std::string& name) {
  std::vector<ApplySetMember> members;  // the map's (kind, resource) order
  for (const auto& [key, member] : w_.s.apply_set_members) {
    if (member.set_tenant == tenant && member.set_name == name) members.push_back(member);
  }
  return members;
}

Result<std::optional<ApplySetMember>> FakeApplySets::MemberOf(const std::string& kind, const std::string& resource) {
  const auto it = w_.s.apply_set_members.find({kind, resource});
  if (it == w_.s.apply_set_members.end()) return std::optional<ApplySetMember>();
  return std::optional<ApplySetMember>(it->second);
}

Status FakeApplySets::PutMembers(const std::vector<ApplySetMember>& members) {
  SEPTA_RETURN_IF_ERROR(w_.CheckWritable());
  for (const ApplySetMember& member : members) {  // all checked first: one statement
    SEPTA_RETURN_IF_ERROR(CheckMember(member));
  }
  for (const ApplySetMember& member : members) w_.s.apply_set_members[{member.kind, member.resource}] = member;
  return Status::Ok();
}

Status FakeApplySets::CheckMember(const ApplySetMember& member) const {
  static constexpr std::string_view kKinds[] = {"TrustTier", "Tenant", "VirtualCluster", "ApiToken"};
  if (std::find(std::begin(kKinds), std::end(kKinds), member.kind) == std::end(kKinds)) {
    return InvalidField("kind", "must be TrustTier, Tenant, VirtualCluster or ApiToken");
  }
  if (!w_.s.apply_sets.contains({member.set_tenant, member.set_name})) return NotFound("no such apply set");
  return Status::Ok();
}

Status FakeApplySets::DeleteMember(const std::string& kind, const std::string& resource) {
  SEPTA_RETURN_IF_ERROR(w_.CheckWritable());
  w_.s.apply_set_members.erase({kind, resource});
  return Status::Ok();
}

Status FakeApplySets::NoteDrift(const std::string& tenant, const std::string& name, std::string_view surface) {
  SEPTA_RETURN_IF_ERROR(w_.CheckWritable());
  w_.s.drift_notes.push_back(tenant + "/" + name + "/" + std::string(surface));
  return Status::Ok();
}

}  // namespace septa::core
