// What the repositories of one FakeStore transaction share: the draft state
// the body works on, the mode, and the revocations to tell once it commits;
// plus the checks that stand in for the database's (the fake must refuse
// what PostgreSQL refuses: the contract suite runs on both).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "tests/support/fake_store.h"

namespace septa::core {

struct FakeWork {
  FakeStore::State& s;
  TxMode mode;
  std::vector<Revocation> revocations;  // told to the watcher once the transaction commits

  Status CheckWritable() const;
};

// PostgreSQL keeps microseconds; so does the fake, so that a value read back
// compares equal with either store.
TimePoint Truncated(TimePoint t);
std::optional<TimePoint> Truncated(const std::optional<TimePoint>& t);

// As services/store's list bound.
Status CheckLimit(int limit);

// The name format of migrations' CHECK constraints.
bool IsDnsLabel(const std::string& name, size_t max_length);

}  // namespace septa::core
