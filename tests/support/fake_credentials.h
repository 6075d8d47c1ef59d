// CredentialRepository in memory (FakeStore), with the constraints of
// migrations/0011_vcluster_credentials.sql that the contract tests check.
#pragma once

#include "services/core/store.h"
#include "tests/support/fake_work.h"

namespace septa::core {

class FakeCredentials final : public CredentialRepository {
 public:
  explicit FakeCredentials(FakeWork& w) : w_(w) {}
  Status Insert(const VclusterCredential& credential) override;
  Result<VclusterCredential> Get(const std::string& tenant, const std::string& vcluster,
                                 const std::string& serial) override;
  Result<std::vector<VclusterCredential>> List(const CredentialQuery& query) override;
  Result<VclusterCredential> Revoke(const std::string& tenant, const std::string& vcluster, const std::string& serial,
                                    TimePoint when) override;

 private:
  FakeWork& w_;
};

}  // namespace septa::core
