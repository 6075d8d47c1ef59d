// core::LeaseStore in memory, with PgLeaseStore's semantics (the lease
// contract test runs on both), and a switch that cuts it off like a replica
// that lost its database: every call fails with kUnavailable (tests only).
#pragma once

#include <map>
#include <mutex>

#include "services/core/lease_store.h"

namespace septa::core {

class FakeLeaseStore final : public LeaseStore {
 public:
  Result<bool> TryAcquire(const std::string& name, const std::string& holder, TimePoint now,
                          std::chrono::milliseconds ttl) override;
  Result<bool> Renew(const std::string& name, const std::string& holder, TimePoint now,
                     std::chrono::milliseconds ttl) override;
  Status Release(const std::string& name, const std::string& holder) override;
  Result<std::optional<Lease>> Get(const std::string& name) override;

 private:
  std::mutex mu_;
  std::map<std::string, Lease> leases_;
};

// Passes every call to `store` until CutOff(); from then on each fails.
class PartitionableLeaseStore final : public LeaseStore {
 public:
  explicit PartitionableLeaseStore(LeaseStore& store) : store_(store) {}
  void CutOff() {
    std::lock_guard lock(mu_);
    cut_off_ = true;
  }

  Result<bool> TryAcquire(const std::string& name, const std::string& holder, TimePoint now,
                          std::chrono::milliseconds ttl) override {
    SEPTA_RETURN_IF_ERROR(Reachable());
    return store_.TryAcquire(name, holder, now, ttl);
  }
  Result<bool> Renew(const std::string& name, const std::string& holder, TimePoint now,
                     std::chrono::milliseconds ttl) override {
    SEPTA_RETURN_IF_ERROR(Reachable());
    return store_.Renew(name, holder, now, ttl);
  }
  Status Release(const std::string& name, const std::string& holder) override {
    SEPTA_RETURN_IF_ERROR(Reachable());
    return store_.Release(name, holder);
  }
  Result<std::optional<Lease>> Get(const std::string& name) override {
    SEPTA_RETURN_IF_ERROR(Reachable());
    return store_.Get(name);
  }

 private:
  Status Reachable() {
    std::lock_guard lock(mu_);
    return cut_off_ ? Unavailable("lease store unreachable (cut off by the test)") : Status::Ok();
  }
  LeaseStore& store_;
  std::mutex mu_;
  bool cut_off_ = false;
};

}  // namespace septa::core
