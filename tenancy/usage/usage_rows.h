// The rows usage is kept as (services/core/usage_store.h stores them): what
// one held entity accrued in a minute, what one GPU of the platform had in a
// minute, an entity's idle run carried between scrapes, and the dated price
// table. Pure values: node_accounting.h makes them from one scrape.
#pragma once

#include <compare>
#include <cstdint>
#include <optional>
#include <string>

#include "common/time_point.h"
#include "gpu/inventory.h"

namespace septa::tenancy::usage {

// A held thing the exporter measures (held_capacity.h): a whole GPU
// (gi_id −1), a MIG instance of it, or a share of it.
struct UsageEntityKey {
  std::string tenant{};
  std::string vcluster{};
  std::string node{};
  std::string gpu_uuid{};
  int gi_id = -1;
  auto operator<=>(const UsageEntityKey&) const = default;
};

// What one entity accrued in one minute from one scrape; the store adds it
// to what earlier scrapes of the same minute accrued.
struct UsageMinuteRow {
  UsageEntityKey entity{};
  TimePoint minute{};  // its start, on the minute
  gpu::Tier tier = gpu::Tier::kShared;
  std::string model{};        // catalog name
  std::string mig_profile{};  // "" unless a MIG instance
  double weight = 0;
  double allocated_gpu_seconds = 0;
  double measured_gpu_seconds = 0;
  double used_gpu_seconds = 0;
  double waste_gpu_seconds = 0;
  double cost = 0;                          // in the platform's currency, at the rate in force then
  double activity_max = 0;                  // the largest activity sampled (kept: the largest)
  double reserved_memory_mib = 0;           // the entity's (kept: the largest)
  std::optional<double> used_memory_mib{};  // the largest FB_USED sampled (kept: the largest)
  int samples = 0;
  bool operator==(const UsageMinuteRow&) const = default;
};

// One GPU of the platform in one minute: present, held (Σ w) and measured.
// Σ tenants' allocated + (capacity − reserved) = capacity.
struct UsagePoolMinuteRow {
  TimePoint minute{};
  std::string node{};
  std::string gpu_uuid{};
  std::string model{};
  double capacity_gpu_seconds = 0;
  double reserved_gpu_seconds = 0;
  double used_gpu_seconds = 0;  // what the device measured, held or not
  bool operator==(const UsagePoolMinuteRow&) const = default;
};

// An entity's idle run (idle_run.h), carried from one scrape to the next.
struct UsageIdleState {
  UsageEntityKey entity{};
  gpu::Tier tier = gpu::Tier::kShared;
  TimePoint window_start{};  // the idle window being sampled now
  double window_activity_max = 0;
  std::optional<double> window_used_memory_mib{};
  std::int64_t idle_ms = 0;  // completed idle windows in a row before window_start
  bool holding_memory = false;
  TimePoint updated{};
  bool operator==(const UsageIdleState&) const = default;
};

// A rate per GPU-hour of held capacity, in force from `valid_from` until the
// next row of the same (model, tier, mig_profile). An entity pays its
// weight of its model's and tier's rate (a 3g instance on an H100 3/7 of
// it, a 250-milli share a quarter), unless its MIG profile has a row of its
// own: that rate is per instance-hour.
struct GpuPrice {
  std::string model{};
  gpu::Tier tier = gpu::Tier::kDedicated;
  std::string mig_profile{};  // "" for every profile
  double per_gpu_hour = 0;
  TimePoint valid_from{};
  bool operator==(const GpuPrice&) const = default;
};

}  // namespace septa::tenancy::usage
