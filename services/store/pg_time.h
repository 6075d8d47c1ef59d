// Instants cross the SQL boundary as integer microseconds since the epoch
// (septa_ts / septa_micros in migrations/0001_init.sql): exact, and
// PostgreSQL's resolution. Internal to services/store.
#pragma once

#include <chrono>
#include <cstdint>

#include "common/clock.h"

namespace septa::store {

inline std::int64_t Micros(TimePoint t) {
  return std::chrono::floor<std::chrono::microseconds>(t.time_since_epoch()).count();
}
inline TimePoint FromMicros(std::int64_t micros) {
  return TimePoint(std::chrono::duration_cast<TimePoint::duration>(std::chrono::microseconds(micros)));
}

}  // namespace septa::store
