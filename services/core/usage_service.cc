#include "services/core/usage_service.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "common/text.h"
#include "services/core/audit.h"
#include "services/core/virtual_cluster_kind.h"
#include "tenancy/usage/idle_run.h"

namespace septa::core {

namespace {

using std::chrono::hours;
using std::chrono::minutes;
using std::chrono::seconds;

constexpr double kSecondsPerHour = 3600.0;

// Instants a TimePoint (nanoseconds since 1970 in 64 bits) holds with room
// to spare: a year past 2262 would wrap around.
constexpr int kFirstYear = 1970;
constexpr int kLastYear = 2199;

Result<TimePoint> InstantOf(const std::string& field, const std::string& text) {
  if (text.empty()) return InvalidField(field, "required (RFC 3339, e.g. 2026-11-01T00:00:00Z)");
  const auto at = ParseRfc3339(text);
  if (!at) return InvalidField(field, QuotedExcerpt(text) + " is not an RFC 3339 date-time");
  const int year = std::stoi(text.substr(0, 4));  // four digits: ParseRfc3339 read them
  if (year < kFirstYear || year > kLastYear) {
    return InvalidField(field, QuotedExcerpt(text) + " is not in the years " + std::to_string(kFirstYear) + " to " +
                                   std::to_string(kLastYear));
  }
  return *at;
}

// "15m", "6h", "7d": a positive whole number of minutes, hours or days.
Result<seconds> StepOf(const std::string& text) {
  if (text.empty()) return seconds(0);
  const char unit = text.back();
  const std::string digits = text.substr(0, text.size() - 1);
  const bool number = !digits.empty() && digits.size() <= 6 &&
                      std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; });
  const long long n = number ? std::stoll(digits) : 0;
  if (n > 0 && unit == 'm') return seconds(minutes(n));
  if (n > 0 && unit == 'h') return seconds(hours(n));
  if (n > 0 && unit == 'd') return seconds(hours(24 * n));
  return InvalidField("step", QuotedExcerpt(text) + " is not a whole number of minutes, hours or days (15m, 6h, 1d)");
}

std::string StepText(seconds step) {
  if (step.count() == 0) return "";
  if (step.count() % 86'400 == 0) return std::to_string(step.count() / 86'400) + "d";
  if (step.count() % 3'600 == 0) return std::to_string(step.count() / 3'600) + "h";
  return std::to_string(step.count() / 60) + "m";
}

std::string_view ResolutionName(UsageResolution resolution) {
  switch (resolution) {
    case UsageResolution::kMinute: return "minute";
    case UsageResolution::kHour: return "hour";
    case UsageResolution::kDay: return "day";
  }
  return "day";
}

Result<std::vector<UsageDimension>> DimensionsOf(const std::vector<std::string>& names, bool platform) {
  std::vector<UsageDimension> out;
  std::set<std::string> seen;
  for (const std::string& name : names) {
    std::optional<UsageDimension> dimension;
    if (name == "tenant" && platform) dimension = UsageDimension::kTenant;
    if (name == "vcluster") dimension = UsageDimension::kVcluster;
    if (name == "tier") dimension = UsageDimension::kTier;
    if (name == "model") dimension = UsageDimension::kModel;
    if (name == "mig_profile") dimension = UsageDimension::kMigProfile;
    if (!dimension) {
      return InvalidField("group_by", QuotedExcerpt(name) + " is not one of " + (platform ? "tenant, " : "") +
                                          "vcluster, tier, model, mig_profile");
    }
    if (!seen.insert(name).second) return InvalidField("group_by", "names " + name + " twice");
    out.push_back(*dimension);
  }
  return out;
}

// Figures of summed seconds, as hours and ratios.
void Fill(UsageItem& item, double allocated_s, double measured_s, double used_s, double waste_s, double cost,
          double reserved_mib, std::optional<double> max_used_mib) {
  item.allocated_gpu_hours = allocated_s / kSecondsPerHour;
  item.measured_gpu_hours = measured_s / kSecondsPerHour;
  item.used_gpu_hours = used_s / kSecondsPerHour;
  item.waste_gpu_hours = waste_s / kSecondsPerHour;
  item.coverage = allocated_s > 0 ? measured_s / allocated_s : 0;
  item.efficiency = measured_s > 0 ? std::optional<double>(used_s / measured_s) : std::nullopt;
  item.cost = cost;
  item.reserved_memory_mib = reserved_mib;
  item.max_used_memory_mib = max_used_mib;
  item.memory_over_request =
      max_used_mib && *max_used_mib > 0 ? std::optional<double>(reserved_mib / *max_used_mib) : std::nullopt;
}

std::optional<double> Larger(std::optional<double> a, std::optional<double> b) {
  if (!a) return b;
  if (!b) return a;
  return std::max(*a, *b);
}

}  // namespace

Result<UsageReport> UsageService::Report(const UsageWindowRequest& request, bool platform, UsageQuery* query_out) {
  SEPTA_ASSIGN_OR_RETURN(const TimePoint start, InstantOf("start", request.start));
  SEPTA_ASSIGN_OR_RETURN(const TimePoint end, InstantOf("end", request.end));
  if (end <= start) return InvalidField("end", "must be after start");
  if (end - start > hours(24 * kMaxWindowDays)) {
    return InvalidField("end", "at most " + std::to_string(kMaxWindowDays) + " days after start");
  }
  SEPTA_ASSIGN_OR_RETURN(const seconds step, StepOf(request.step));
  SEPTA_ASSIGN_OR_RETURN(const std::vector<UsageDimension> group_by, DimensionsOf(request.group_by, platform));
  const auto window = std::chrono::duration_cast<seconds>(end - start);
  if (step.count() > 0 && window.count() / step.count() + (window.count() % step.count() ? 1 : 0) > kMaxBuckets) {
    return InvalidField("step", "gives more than " + std::to_string(kMaxBuckets) + " buckets over the window");
  }
  // The coarsest table whose grid start, end and step lie on; none: the
  // minutes' refusal, which names the field off the grid.
  UsageResolution resolution = UsageResolution::kMinute;
  SEPTA_RETURN_IF_ERROR(CheckUsageWindow(start, end, UsageResolution::kMinute, step));
  for (const UsageResolution coarser : {UsageResolution::kHour, UsageResolution::kDay}) {
    if (CheckUsageWindow(start, end, coarser, step).ok()) resolution = coarser;
  }
  if (resolution == UsageResolution::kMinute && start < clock_.Now() - settings_.minute_retention) {
    return InvalidField("start",
                        "per-minute usage is kept " +
                            std::to_string(std::chrono::duration_cast<hours>(settings_.minute_retention).count() / 24) +
                            " days; for older windows give whole hours");
  }
  const UsageQuery query{.tenant = request.tenant,
                         .start = start,
                         .end = end,
                         .resolution = resolution,
                         .step = step,
                         .group_by = group_by};
  SEPTA_ASSIGN_OR_RETURN(const std::vector<UsageBucket> buckets,
                         TransactFor(store_, TxMode::kReadOnly, [&](Tx& tx) { return tx.Usage().Query(query); }));
  if (static_cast<int>(buckets.size()) > kMaxItems) {
    return Status(Code::kResourceExhausted, "the report has more than " + std::to_string(kMaxItems) +
                                                " items: narrow the window, a longer step or fewer groups");
  }
  UsageReport report{.start = start,
                     .end = end,
                     .step = StepText(step),
                     .resolution = std::string(ResolutionName(resolution)),
                     .currency = settings_.currency};
  double allocated = 0, measured = 0, used = 0, waste = 0, cost = 0, reserved = 0;
  std::optional<double> max_used;
  for (const UsageBucket& bucket : buckets) {
    UsageItem item{.start = bucket.start,
                   .end = UsageBucketEnd(bucket.start, start, end, step),
                   .tenant = bucket.tenant,
                   .vcluster = bucket.vcluster,
                   .tier = bucket.tier,
                   .model = bucket.model,
                   .mig_profile = bucket.mig_profile};
    Fill(item, bucket.allocated_gpu_seconds, bucket.measured_gpu_seconds, bucket.used_gpu_seconds,
         bucket.waste_gpu_seconds, bucket.cost, bucket.reserved_memory_mib, bucket.used_memory_mib);
    allocated += bucket.allocated_gpu_seconds;
    measured += bucket.measured_gpu_seconds;
    used += bucket.used_gpu_seconds;
    waste += bucket.waste_gpu_seconds;
    cost += bucket.cost;
    reserved = std::max(reserved, bucket.reserved_memory_mib);
    max_used = Larger(max_used, bucket.used_memory_mib);
    report.items.push_back(std::move(item));
  }
  report.total = {.start = start, .end = end, .tenant = request.tenant};
  Fill(report.total, allocated, measured, used, waste, cost, reserved, max_used);
  if (query_out != nullptr) *query_out = query;
  return report;
}

Result<std::optional<PerKeyLimit::Held>> UsageService::ReportSlot(const RequestContext& ctx) {
  if (ctx.principal.admin) return std::optional<PerKeyLimit::Held>();
  std::optional<PerKeyLimit::Held> held = reports_in_flight_.TryHold(ctx.principal.tenant);
  if (!held) {
    // ABORTED, a concurrency conflict: clients retry it.
    return Aborted("tenant \"" + ctx.principal.tenant + "\" already has " + std::to_string(kTenantReportsInFlight) +
                   " usage reports under way: send the next one when one has answered");
  }
  return held;
}

Result<UsageReport> UsageService::TenantUsage(const RequestContext& ctx, const UsageWindowRequest& request) {
  SEPTA_RETURN_IF_ERROR(CheckMaySeeTenant(ctx, request.tenant));
  SEPTA_ASSIGN_OR_RETURN(const auto slot, ReportSlot(ctx));
  return Report(request, false, nullptr);
}

Result<PlatformUsageReport> UsageService::PlatformUsage(const RequestContext& ctx, const UsageWindowRequest& request) {
  SEPTA_RETURN_IF_ERROR(RequireAdmin(ctx.principal, "read the platform's usage"));
  UsageWindowRequest every = request;
  every.tenant.clear();
  UsageQuery query;
  PlatformUsageReport out;
  SEPTA_ASSIGN_OR_RETURN(out.usage, Report(every, true, &query));
  const bool by_model =
      std::find(query.group_by.begin(), query.group_by.end(), UsageDimension::kModel) != query.group_by.end();
  SEPTA_ASSIGN_OR_RETURN(const std::vector<UsagePoolBucket> pool, TransactFor(store_, TxMode::kReadOnly, [&](Tx& tx) {
                           return tx.Usage().QueryPool({.start = query.start,
                                                        .end = query.end,
                                                        .resolution = query.resolution,
                                                        .step = query.step,
                                                        .by_model = by_model});
                         }));
  for (const UsagePoolBucket& bucket : pool) {
    out.pool.push_back(
        {.start = bucket.start,
         .end = UsageBucketEnd(bucket.start, query.start, query.end, query.step),
         .model = bucket.model,
         .capacity_gpu_hours = bucket.capacity_gpu_seconds / kSecondsPerHour,
         .reserved_gpu_hours = bucket.reserved_gpu_seconds / kSecondsPerHour,
         .unreserved_gpu_hours = (bucket.capacity_gpu_seconds - bucket.reserved_gpu_seconds) / kSecondsPerHour,
         .used_gpu_hours = bucket.used_gpu_seconds / kSecondsPerHour});
  }
  return out;
}

Result<std::vector<HoarderReport>> UsageService::Hoarders(const RequestContext& ctx, const std::string& asked) {
  // A tenant's principal asking for no tenant means its own.
  const std::string tenant = asked.empty() && !ctx.principal.admin ? ctx.principal.tenant : asked;
  if (!tenant.empty()) SEPTA_RETURN_IF_ERROR(CheckMaySeeTenant(ctx, tenant));
  SEPTA_ASSIGN_OR_RETURN(const std::vector<tenancy::usage::Hoarder> hoarders,
                         TransactFor(store_, TxMode::kReadOnly, [&](Tx& tx) {
                           return CurrentHoarders(tx, clock_.Now(), settings_.hoarding, tenant);
                         }));
  std::vector<HoarderReport> out;
  for (const tenancy::usage::Hoarder& hoarder : hoarders) {
    out.push_back({.tenant = hoarder.holder.tenant,
                   .vcluster = hoarder.holder.vcluster,
                   .tier = hoarder.holder.tier,
                   .idle = std::chrono::duration_cast<seconds>(hoarder.idle),
                   .threshold = settings_.hoarding.thresholds.For(hoarder.holder.tier),
                   .holding_memory = hoarder.holding_memory});
  }
  std::sort(out.begin(), out.end(), [](const HoarderReport& a, const HoarderReport& b) {
    return std::tie(a.tenant, a.vcluster) < std::tie(b.tenant, b.vcluster);
  });
  return out;
}

Result<std::vector<tenancy::usage::GpuPrice>> UsageService::Prices(const RequestContext& ctx) {
  SEPTA_RETURN_IF_ERROR(RequireAdmin(ctx.principal, "read GPU prices"));
  return TransactFor(store_, TxMode::kReadOnly, [](Tx& tx) { return tx.Usage().Prices(); });
}

Result<tenancy::usage::GpuPrice> UsageService::CreatePrice(const RequestContext& ctx, tenancy::usage::GpuPrice price) {
  SEPTA_RETURN_IF_ERROR(RequireAdminWriter(ctx.principal, "set GPU prices"));
  if (price.model.empty()) return InvalidField("price.model", "required: a GPU model of the catalog");
  if (gpu::Catalog::Default().Find(price.model) == nullptr) {
    return InvalidField("price.model", QuotedExcerpt(price.model) + " is not in the GPU catalog");
  }
  if (!price.mig_profile.empty()) {
    if (price.tier != gpu::Tier::kIsolated)
      return InvalidField("price.mig_profile", "only isolated tiers hold MIG instances");
    if (gpu::Catalog::Default().Find(price.model)->ProfileIndex(price.mig_profile) < 0) {
      return InvalidField("price.mig_profile",
                          QuotedExcerpt(price.mig_profile) + " is not a MIG profile of " + price.model);
    }
  }
  if (!std::isfinite(price.per_gpu_hour) || price.per_gpu_hour < 0) {
    return InvalidField("price.per_gpu_hour", "must be a number of at least 0");
  }
  const TimePoint now = clock_.Now();
  if (price.valid_from == TimePoint{}) price.valid_from = now;
  if (price.valid_from < now - minutes(1)) {
    return InvalidField("price.valid_from",
                        "may not be in the past: a rate in force is never changed, so that "
                        "past bills do not change");
  }
  price.valid_from = std::chrono::floor<std::chrono::microseconds>(price.valid_from);
  SEPTA_RETURN_IF_ERROR(store_.Transact(TxMode::kReadWrite, [&](Tx& tx) -> Status {
    SEPTA_RETURN_IF_ERROR(tx.Usage().PutPrice(price));
    return tx.Audit().Append(AuditOf(ctx, now, "gpu_price.create",
                                     "gpu-prices/" + price.model + "/" + std::string(gpu::TierName(price.tier)) +
                                         (price.mig_profile.empty() ? "" : "/" + price.mig_profile),
                                     "", FormatRfc3339(price.valid_from)));
  }));
  return price;
}

}  // namespace septa::core
