// The usage reports of API v1 (UsageService, api/proto/septa/v1/usage.proto,
// docs/usage.md): a tenant's usage over a window by bucket and group, the
// platform's (every tenant's and the unreserved pool), hoarders, and the
// dated price table. Reads what the usage scraper accrued
// (core/usage_store.h); computes nothing the store has not summed but the
// ratios. Windows are read from the coarsest table whose grid the window
// and the step lie on: days, hours, or minutes (kept minute_retention).
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/status.h"
#include "services/core/auth.h"
#include "services/core/per_key_limit.h"
#include "services/core/store.h"
#include "services/core/usage_hoarding.h"
#include "tenancy/usage/usage_math.h"

namespace septa::core {

// Usage reports one tenant may have in flight at once (docs/usage.md).
inline constexpr int kTenantReportsInFlight = 2;

struct UsageServiceSettings {
  std::string currency = "USD";
  HoardingSettings hoarding{};  // the hoarding controller's: ListHoarders reports what it acts on
  std::chrono::milliseconds minute_retention{35LL * 24 * 3'600'000};
};

// As the request gives it (text, checked here, each error naming its field).
struct UsageWindowRequest {
  std::string tenant{};  // GetTenantUsage: the tenant; GetPlatformUsage: empty
  std::string start{};
  std::string end{};
  std::string step{};
  std::vector<std::string> group_by{};
};

struct UsageItem {
  TimePoint start{};
  TimePoint end{};
  std::string tenant{};
  std::string vcluster{};
  std::string tier{};
  std::string model{};
  std::string mig_profile{};
  double allocated_gpu_hours = 0;
  double measured_gpu_hours = 0;
  double used_gpu_hours = 0;
  double waste_gpu_hours = 0;
  std::optional<double> efficiency{};
  double coverage = 0;
  double cost = 0;
  double reserved_memory_mib = 0;
  std::optional<double> max_used_memory_mib{};
  std::optional<double> memory_over_request{};
};

struct UsageReport {
  TimePoint start{};
  TimePoint end{};
  std::string step{};        // as normalised: "1d", "6h", "15m"; empty: one bucket
  std::string resolution{};  // minute | hour | day
  std::string currency{};
  std::vector<UsageItem> items{};
  UsageItem total{};
};

struct UsagePoolItem {
  TimePoint start{};
  TimePoint end{};
  std::string model{};
  double capacity_gpu_hours = 0;
  double reserved_gpu_hours = 0;
  double unreserved_gpu_hours = 0;
  double used_gpu_hours = 0;
};

struct PlatformUsageReport {
  UsageReport usage{};
  std::vector<UsagePoolItem> pool{};
};

struct HoarderReport {
  std::string tenant{};
  std::string vcluster{};
  gpu::Tier tier = gpu::Tier::kShared;
  std::chrono::seconds idle{0};
  std::chrono::seconds threshold{0};
  bool holding_memory = false;
};

class UsageService {
 public:
  static constexpr int kMaxBuckets = 2000;
  static constexpr int kMaxItems = 100'000;
  static constexpr int kMaxWindowDays = 400;

  UsageService(Store& store, const Clock& clock, UsageServiceSettings settings)
      : store_(store), clock_(clock), settings_(std::move(settings)) {}

  // The tenant's own principals (viewers too) and admins. A tenant's
  // principals have one report in flight at a time (kAborted while another
  // is): a tenant asking for many heavy reports at once takes one worker
  // and one database connection, never every one (docs/usage.md). Admins
  // are not bound.
  Result<UsageReport> TenantUsage(const RequestContext& ctx, const UsageWindowRequest& request);
  // Admins.
  Result<PlatformUsageReport> PlatformUsage(const RequestContext& ctx, const UsageWindowRequest& request);
  // That tenant's hoarders; `tenant` empty: every tenant's for an admin,
  // the caller's own for a tenant's principal.
  Result<std::vector<HoarderReport>> Hoarders(const RequestContext& ctx, const std::string& tenant);
  // Admins; ordered by model, tier, profile, valid_from.
  Result<std::vector<tenancy::usage::GpuPrice>> Prices(const RequestContext& ctx);
  // Admin owners. valid_from unset (the epoch): now. A rate may not start
  // in the past; the same rate again is OK, another rate for the same
  // (model, tier, profile, valid_from) ALREADY_EXISTS.
  Result<tenancy::usage::GpuPrice> CreatePrice(const RequestContext& ctx, tenancy::usage::GpuPrice price);

  const UsageServiceSettings& settings() const { return settings_; }

 private:
  Result<UsageReport> Report(const UsageWindowRequest& request, bool platform, UsageQuery* query_out);
  // For a report of a tenant's principal, its tenant's one slot; nothing to hold for an admin.
  Result<std::optional<PerKeyLimit::Held>> ReportSlot(const RequestContext& ctx);

  Store& store_;
  const Clock& clock_;
  UsageServiceSettings settings_;
  // By tenant: two, so that two pages of one tenant (each asking one report
  // at a time) both answer, and a flood takes at most two workers.
  PerKeyLimit reports_in_flight_{kTenantReportsInFlight};
};

}  // namespace septa::core
