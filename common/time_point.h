// The instant type every layer shares. Pure libraries (gpu/, tenancy/) take
// instants as values and never read a clock; common/clock.h reads one.
#pragma once

#include <chrono>

namespace septa {

using TimePoint = std::chrono::system_clock::time_point;

}  // namespace septa
