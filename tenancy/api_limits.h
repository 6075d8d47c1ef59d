// Bounds on one virtual cluster's Kubernetes API as septad serves it
// (services/vcp): what it stores and what it holds at once, so that one
// tenant cannot take the memory, threads and connections of the septad that
// serves every virtual cluster. Each trust tier has defaults (every member
// set); an admin may override any member per virtual cluster.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "common/status.h"

namespace septa::tenancy {

struct ApiLimits {
  std::optional<std::int64_t> objects{};             // stored objects of every kind, seeded ones included
  std::optional<std::int64_t> object_bytes{};        // their JSON text, summed
  std::optional<std::int64_t> watches{};             // watches open at once (the syncer's not counted)
  std::optional<std::int64_t> requests_in_flight{};  // requests admitted and not yet answered (likewise)
  bool operator==(const ApiLimits&) const = default;
};

// Upper bounds of any member: far above what one septad could hold, they
// catch typos and keep sums far from overflow.
inline constexpr std::int64_t kMaxApiObjects = 10'000'000;
inline constexpr std::int64_t kMaxApiObjectBytes = 1LL << 40;  // 1 TiB
inline constexpr std::int64_t kMaxApiWatches = 1'000'000;
inline constexpr std::int64_t kMaxApiRequestsInFlight = 1'000'000;

// Each present member in 0..its bound (0 allows none); violations name
// "<field>.<member>" ("api_limits.watches").
Status ValidateApiLimits(std::string_view field, const ApiLimits& limits);

// The limits that apply: each member of `overrides` when set, else the
// tier's default (absent in both: unlimited).
ApiLimits EffectiveApiLimits(const ApiLimits& tier_defaults, const ApiLimits& overrides);

}  // namespace septa::tenancy
