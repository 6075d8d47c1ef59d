// core::LeaseStore on PostgreSQL: the `leases` table of
// migrations/0002_leases.sql, one compare-and-set statement per operation
// (INSERT ... ON CONFLICT DO UPDATE ... WHERE, or UPDATE ... WHERE), run in
// autocommit on a small pool of its own. PostgreSQL locks the row and
// re-checks the condition on its latest version, so of two replicas racing
// for a lease exactly one wins.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "services/core/lease_store.h"

namespace septa::store {

struct PgLeaseStoreOptions {
  std::string database_url{};
  int pool_size = 2;
  std::chrono::milliseconds acquire_timeout{5000};
  // statement_timeout and connect timeout, as PgStoreOptions::statement_timeout.
  std::chrono::milliseconds statement_timeout{5000};
};

class ConnectionPool;

class PgLeaseStore final : public core::LeaseStore {
 public:
  explicit PgLeaseStore(PgLeaseStoreOptions options);  // connects lazily
  ~PgLeaseStore() override;

  Result<bool> TryAcquire(const std::string& name, const std::string& holder, TimePoint now,
                          std::chrono::milliseconds ttl) override;
  Result<bool> Renew(const std::string& name, const std::string& holder, TimePoint now,
                     std::chrono::milliseconds ttl) override;
  Status Release(const std::string& name, const std::string& holder) override;
  Result<std::optional<core::Lease>> Get(const std::string& name) override;

 private:
  std::unique_ptr<ConnectionPool> pool_;
};

}  // namespace septa::store
