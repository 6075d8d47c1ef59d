// The instant type every layer shares. Pure libraries (gpu/, tenancy/) take
// instants as values and never read a clock; common/clock.h reads one.
#pragma once

#include <chrono>
#include <string>

namespace septa {

using TimePoint = std::chrono::system_clock::time_point;

// Whole seconds in UTC, "2026-11-29T13:37:00Z": Kubernetes' and Vault's form.
std::string FormatRfc3339(TimePoint t);

}  // namespace septa
