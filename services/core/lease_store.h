// Where leases live: the port ShardLeases uses, implemented on PostgreSQL by
// store::PgLeaseStore (services/store) and in memory by FakeLeaseStore
// (tests/support). Every operation is one compare-and-set, so two holders
// can never both hold a lease, whatever their timing.
//
// Time is passed in (`now`, from each replica's injected clock): leases are
// only as good as the replicas' clocks agree, which is why a holder stops
// acting at its own idea of the expiry and a TTL should be many times the
// clock skew between replicas.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "common/clock.h"
#include "common/status.h"

namespace septa::core {

struct Lease {
  std::string name;
  std::string holder;  // empty: released, nobody holds it
  TimePoint expire_time;
  std::int64_t generation = 0;  // +1 each time the lease changes hands
  std::int64_t renewals = 0;    // renewals by the current holder
  bool operator==(const Lease&) const = default;
};

class LeaseStore {
 public:
  virtual ~LeaseStore() = default;

  // `holder` takes `name` until now + ttl if nobody holds it, it expired by
  // `now`, or `holder` holds it already (then it is extended). True iff
  // `holder` holds it afterwards; false when someone else does.
  virtual Result<bool> TryAcquire(const std::string& name, const std::string& holder, TimePoint now,
                                  std::chrono::milliseconds ttl) = 0;
  // Extends the lease to now + ttl iff `holder` holds it and it has not
  // expired by `now`. False otherwise: the holder must stop acting on it.
  virtual Result<bool> Renew(const std::string& name, const std::string& holder, TimePoint now,
                             std::chrono::milliseconds ttl) = 0;
  // Gives the lease up at once if `holder` holds it (a clean shutdown hands
  // over without waiting for the TTL); nothing happens otherwise.
  virtual Status Release(const std::string& name, const std::string& holder) = 0;
  // The lease as stored; nullopt if it was never taken.
  virtual Result<std::optional<Lease>> Get(const std::string& name) = 0;
};

}  // namespace septa::core
