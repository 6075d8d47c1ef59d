// Trust tiers (DESIGN.md §2): named, admin-editable records. Each maps onto
// one gpu::Tier — the isolation class that decides which capacity is legal,
// and the one tier type of the code base (the placement engine, capacity
// validation and the store all speak it).
#pragma once

#include <cstdint>
#include <string>

#include "common/status.h"
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
  std::int64_t version = 1;  // bumped by every change; the etag is derived from it
};

// Longest credential a tier may allow: a year (tokens and certificates are
// meant to be short-lived; a longer cap is a mistake, not a policy).
inline constexpr std::int64_t kMaxCredentialTtlSeconds = 366LL * 24 * 3600;

// What an admin may write as a tier: a DNS-1123 label name of at most 40
// characters, printable one-line texts, a known gpu_sharing, a runtime
// class that is a DNS-1123 subdomain, a credential cap of 1 s to
// kMaxCredentialTtlSeconds, and every API limit set within its bounds.
// Each refusal names its field.
Status ValidateTrustTier(const TrustTier& tier);

}  // namespace septa::tenancy
