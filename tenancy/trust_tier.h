// Trust tiers (DESIGN.md §2): named, admin-editable records. Each maps onto
// one gpu::Tier — the isolation class that decides which capacity is legal,
// and the one tier type of the code base (the placement engine, capacity
// validation and the store all speak it).
#pragma once

#include <cstdint>
#include <string>

#include "common/time_point.h"
#include "gpu/inventory.h"
#include "tenancy/api_limits.h"

namespace septa::tenancy {

struct TrustTier {
  std::string name;  // shared | isolated | dedicated | exclusive | admin-defined
  std::string display_name;
  std::string description;
  gpu::Tier gpu_sharing = gpu::Tier::kShared;  // how GPU capacity may be handed to its tenants
  std::string co_tenancy;                      // who may share hardware with the tenant
  std::string runtime_class;                   // host runtimeClassName the syncer patches in
  std::int64_t credential_ttl_max_seconds = 0;
  TimePoint create_time{};
  TimePoint update_time{};
  // The defaults of its tenants' virtual clusters' API limits (every member set).
  ApiLimits api_limits{};
};

}  // namespace septa::tenancy
