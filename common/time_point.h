// The instant type every layer shares. Pure libraries (gpu/, tenancy/) take
// instants as values and never read a clock; common/clock.h reads one.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

namespace septa {

using TimePoint = std::chrono::system_clock::time_point;

// Whole seconds in UTC, "2026-11-29T13:37:00Z": Kubernetes' and Vault's form.
std::string FormatRfc3339(TimePoint t);

// An RFC 3339 date-time, strictly: "2026-11-01T00:00:00Z", with an optional
// fraction of up to 9 digits and an offset "Z" or "+HH:MM" / "-HH:MM" ("T"
// and "Z" in either case, as the RFC allows). nullopt for anything else,
// a date that does not exist (2026-02-30), a leap second, or an instant a
// TimePoint cannot hold (before 1678 or after 2261).
std::optional<TimePoint> ParseRfc3339(std::string_view text);

}  // namespace septa
