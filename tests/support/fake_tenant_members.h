// TenantMemberRepository in memory (FakeStore), with the constraints of
// migrations/0026_tenant_members.sql that the contract tests check.
#pragma once

#include "services/core/store.h"
#include "tests/support/fake_work.h"

namespace septa::core {

class FakeTenantMembers final : public TenantMemberRepository {
 public:
  explicit FakeTenantMembers(FakeWork& w) : w_(w) {}
  Result<std::vector<TenantMember>> List(const std::string& tenant) override;
  Result<TenantMember> Get(const std::string& tenant, MemberKind kind, const std::string& name) override;
  Status Insert(const TenantMember& member) override;
  Status Update(const TenantMember& member, std::int64_t expected_version) override;
  Status Delete(const std::string& tenant, MemberKind kind, const std::string& name,
                std::int64_t expected_version) override;
  Result<std::vector<TenantMember>> ListFor(const std::string& user, const std::vector<std::string>& groups) override;

 private:
  FakeWork& w_;
};

// The key of FakeStore::State::tenant_members: (tenant, kind's name, name),
// which orders as PostgreSQL's COLLATE "C" does.
FakeStore::State::MemberKey MemberKeyOf(const std::string& tenant, MemberKind kind, const std::string& name);

}  // namespace septa::core
