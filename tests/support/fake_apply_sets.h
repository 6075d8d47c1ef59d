// ApplySetRepository in memory (FakeStore), with the constraints of
// migrations/0020_apply_sets.sql and 0021 that the contract tests check.
#pragma once

#include "services/core/store.h"
#include "tests/support/fake_work.h"

namespace septa::core {

class FakeApplySets final : public ApplySetRepository {
 public:
  explicit FakeApplySets(FakeWork& w) : w_(w) {}
  Result<std::optional<ApplySet>> Get(const std::string& tenant, const std::string& name) override;
  Status Put(const ApplySet& set) override;
  Result<std::vector<ApplySet>> List(const std::string& tenant) override;
  Result<std::vector<ApplySet>> ListAll() override;
  Result<std::vector<ApplySetMember>> Members(const std::string& tenant, const std::string& name) override;
  Result<std::optional<ApplySetMember>> MemberOf(const std::string& kind, const std::string& resource) override;
  Status PutMembers(const std::vector<ApplySetMember>& members) override;
  Status DeleteMember(const std::string& kind, const std::string& resource) override;
  Status NoteDrift(const std::string& tenant, const std::string& name, std::string_view surface) override;

 private:
  Status CheckMember(const ApplySetMember& member) const;

  FakeWork& w_;
};

}  // namespace septa::core
