// Connection pool figures, exported later as Prometheus gauges and counters.
#pragma once

#include <cstdint>

namespace septa::store {

struct PoolStats {
  int max_size = 0;
  int in_use = 0;                         // leased to a transaction now
  int idle = 0;                           // open, waiting in the pool
  std::uint64_t waits_total = 0;          // acquisitions that had to wait
  std::uint64_t wait_timeouts_total = 0;  // ... and gave up
  std::uint64_t opened_total = 0;         // connections ever opened
  std::uint64_t discarded_total = 0;      // broken connections thrown away
  std::uint64_t cut_total = 0;            // leases cut for outlasting the lease limit
};

}  // namespace septa::store
