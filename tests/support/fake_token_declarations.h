// TokenDeclarationRepository in memory (FakeStore), with the checks of
// migrations/0022_token_declarations.sql that the contract tests check.
#pragma once

#include "services/core/store.h"
#include "tests/support/fake_work.h"

namespace septa::core {

class FakeTokenDeclarations final : public TokenDeclarationRepository {
 public:
  explicit FakeTokenDeclarations(FakeWork& w) : w_(w) {}
  Result<std::optional<TokenDeclaration>> Get(const std::string& name) override;
  Status Insert(const TokenDeclaration& declaration) override;
  Status Update(const TokenDeclaration& declaration, std::int64_t expected_version) override;
  Status Delete(const std::string& name) override;
  Result<std::vector<TokenDeclaration>> List() override;

 private:
  FakeWork& w_;
};

}  // namespace septa::core
