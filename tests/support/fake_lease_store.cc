#include "tests/support/fake_lease_store.h"

namespace septa::core {

Result<bool> FakeLeaseStore::TryAcquire(const std::string& name, const std::string& holder, TimePoint now,
                                        std::chrono::milliseconds ttl) {
  // The CHECK constraints of migrations/0002_leases.sql, as PgLeaseStore reports them.
  if (name.empty() || name.size() > 200) return InvalidField("name", "must be 1-200 characters");
  if (holder.empty() || holder.size() > 200) return InvalidField("holder", "must be 1-200 characters");
  std::lock_guard lock(mu_);
  auto [it, created] = leases_.try_emplace(name, Lease{name, holder, now + ttl, 1, 0});
  if (created) return true;
  Lease& lease = it->second;
  const bool tenure_goes_on = lease.holder == holder && lease.expire_time > now;
  if (!lease.holder.empty() && lease.holder != holder && lease.expire_time > now) return false;
  lease.expire_time = now + ttl;
  if (tenure_goes_on) {
    ++lease.renewals;
  } else {
    lease.holder = holder;
    ++lease.generation;
    lease.renewals = 0;
  }
  return true;
}

Result<bool> FakeLeaseStore::Renew(const std::string& name, const std::string& holder, TimePoint now,
                                   std::chrono::milliseconds ttl) {
  std::lock_guard lock(mu_);
  auto it = leases_.find(name);
  if (it == leases_.end() || it->second.holder != holder || it->second.expire_time <= now) return false;
  it->second.expire_time = now + ttl;
  ++it->second.renewals;
  return true;
}

Status FakeLeaseStore::Release(const std::string& name, const std::string& holder) {
  std::lock_guard lock(mu_);
  if (auto it = leases_.find(name); it != leases_.end() && it->second.holder == holder) it->second.holder.clear();
  return Status::Ok();
}

Result<std::optional<Lease>> FakeLeaseStore::Get(const std::string& name) {
  std::lock_guard lock(mu_);
  auto it = leases_.find(name);
  if (it == leases_.end()) return std::optional<Lease>();
  return std::optional<Lease>(it->second);
}

}  // namespace septa::core
