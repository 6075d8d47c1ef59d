// PersonSessionRepository in memory (FakeStore), with the constraints of
// migrations/0028_person_sessions.sql and its trigger's revocations.
#pragma once

#include "services/core/store.h"
#include "tests/support/fake_work.h"

namespace septa::core {

class FakePersonSessions final : public PersonSessionRepository {
 public:
  explicit FakePersonSessions(FakeWork& w) : w_(w) {}
  Status InsertSignIn(const PendingSignIn& sign_in) override;
  Result<PendingSignIn> TakeSignIn(const std::string& state_hash) override;
  Result<int> CountSignIns(TimePoint now) override;
  Result<int> CountSignInsFrom(const std::string& client, TimePoint now) override;
  Status Insert(const PersonSession& session) override;
  Result<PersonSession> Get(const std::string& id) override;
  Result<std::vector<PersonSession>> ListLive(const std::string& issuer, const std::string& user,
                                              TimePoint now) override;
  Status UpdateIdentity(const PersonSession& session, std::int64_t expected_version) override;
  Status Revoke(const std::string& id, TimePoint when) override;
  Result<int> DeleteDead(TimePoint now, TimePoint dead_before, int limit) override;

 private:
  FakeWork& w_;
};

}  // namespace septa::core
