// UsageService over core::UsageService.
#include <google/protobuf/util/time_util.h>

#include "septa/v1/usage.pb.h"
#include "services/apiv1/convert.h"
#include "services/apiv1/rpcs.h"

namespace septa::apiv1 {

namespace {

using google::protobuf::util::TimeUtil;

v1::UsageItem UsageItemProto(const core::UsageItem& item) {
  v1::UsageItem out;
  *out.mutable_start() = ToTimestamp(item.start);
  *out.mutable_end() = ToTimestamp(item.end);
  out.set_tenant(item.tenant);
  out.set_vcluster(item.vcluster);
  out.set_tier(item.tier);
  out.set_model(item.model);
  out.set_mig_profile(item.mig_profile);
  out.set_allocated_gpu_hours(item.allocated_gpu_hours);
  out.set_measured_gpu_hours(item.measured_gpu_hours);
  out.set_used_gpu_hours(item.used_gpu_hours);
  out.set_waste_gpu_hours(item.waste_gpu_hours);
  if (item.efficiency) out.set_efficiency(*item.efficiency);
  out.set_coverage(item.coverage);
  out.set_cost(item.cost);
  out.set_reserved_memory_mib(item.reserved_memory_mib);
  if (item.max_used_memory_mib) out.set_max_used_memory_mib(*item.max_used_memory_mib);
  if (item.memory_over_request) out.set_memory_over_request(*item.memory_over_request);
  return out;
}

v1::UsageReport UsageReportProto(const core::UsageReport& report) {
  v1::UsageReport out;
  *out.mutable_start() = ToTimestamp(report.start);
  *out.mutable_end() = ToTimestamp(report.end);
  out.set_step(report.step);
  out.set_resolution(report.resolution);
  out.set_currency(report.currency);
  for (const core::UsageItem& item : report.items) *out.add_items() = UsageItemProto(item);
  *out.mutable_total() = UsageItemProto(report.total);
  return out;
}

template <class Request>
core::UsageWindowRequest WindowOf(const Request& req, std::string tenant) {
  return {.tenant = std::move(tenant),
          .start = req.start(),
          .end = req.end(),
          .step = req.step(),
          .group_by = {req.group_by().begin(), req.group_by().end()}};
}

v1::GpuPrice GpuPriceProto(const tenancy::usage::GpuPrice& price) {
  v1::GpuPrice out;
  out.set_model(price.model);
  out.set_tier(std::string(gpu::TierName(price.tier)));
  out.set_mig_profile(price.mig_profile);
  out.set_per_gpu_hour(price.per_gpu_hour);
  *out.mutable_valid_from() = ToTimestamp(price.valid_from);
  return out;
}

Result<tenancy::usage::GpuPrice> GpuPriceFromProto(const v1::GpuPrice& in) {
  const std::optional<gpu::Tier> tier = gpu::TierFromName(in.tier());
  if (!tier) return InvalidField("price.tier", "must be one of shared, isolated, dedicated, exclusive");
  tenancy::usage::GpuPrice out{
      .model = in.model(), .tier = *tier, .mig_profile = in.mig_profile(), .per_gpu_hour = in.per_gpu_hour()};
  if (in.has_valid_from()) {
    out.valid_from = TimePoint(std::chrono::duration_cast<TimePoint::duration>(
        std::chrono::nanoseconds(TimeUtil::TimestampToNanoseconds(in.valid_from()))));
  }
  return out;
}

}  // namespace

void AddUsageRpcs(Handlers& handlers, const core::UseCases& uc) {
  handlers.Add<v1::GetTenantUsageRequest>(
      [uc](const core::RequestContext& ctx, const v1::GetTenantUsageRequest& req) -> Result<v1::UsageReport> {
        SEPTA_ASSIGN_OR_RETURN(const core::UsageReport report, uc.usage.TenantUsage(ctx, WindowOf(req, req.tenant())));
        return UsageReportProto(report);
      });
  handlers.Add<v1::GetPlatformUsageRequest>(
      [uc](const core::RequestContext& ctx, const v1::GetPlatformUsageRequest& req) -> Result<v1::PlatformUsageReport> {
        SEPTA_ASSIGN_OR_RETURN(const core::PlatformUsageReport report, uc.usage.PlatformUsage(ctx, WindowOf(req, "")));
        v1::PlatformUsageReport out;
        *out.mutable_usage() = UsageReportProto(report.usage);
        for (const core::UsagePoolItem& item : report.pool) {
          v1::UsagePoolItem* pool = out.add_pool();
          *pool->mutable_start() = ToTimestamp(item.start);
          *pool->mutable_end() = ToTimestamp(item.end);
          pool->set_model(item.model);
          pool->set_capacity_gpu_hours(item.capacity_gpu_hours);
          pool->set_reserved_gpu_hours(item.reserved_gpu_hours);
          pool->set_unreserved_gpu_hours(item.unreserved_gpu_hours);
          pool->set_used_gpu_hours(item.used_gpu_hours);
        }
        return out;
      });
  handlers.Add<v1::ListHoardersRequest>(
      [uc](const core::RequestContext& ctx, const v1::ListHoardersRequest& req) -> Result<v1::ListHoardersResponse> {
        SEPTA_ASSIGN_OR_RETURN(const std::vector<core::HoarderReport> hoarders, uc.usage.Hoarders(ctx, req.tenant()));
        v1::ListHoardersResponse out;
        for (const core::HoarderReport& h : hoarders) {
          v1::Hoarder* hoarder = out.add_hoarders();
          hoarder->set_tenant(h.tenant);
          hoarder->set_vcluster(h.vcluster);
          hoarder->set_tier(std::string(gpu::TierName(h.tier)));
          hoarder->set_idle_seconds(h.idle.count());
          hoarder->set_threshold_seconds(h.threshold.count());
          hoarder->set_holding_memory(h.holding_memory);
        }
        return out;
      });
  handlers.Add<v1::ListGpuPricesRequest>(
      [uc](const core::RequestContext& ctx, const v1::ListGpuPricesRequest&) -> Result<v1::ListGpuPricesResponse> {
        SEPTA_ASSIGN_OR_RETURN(const std::vector<tenancy::usage::GpuPrice> prices, uc.usage.Prices(ctx));
        v1::ListGpuPricesResponse out;
        out.set_currency(uc.usage.settings().currency);
        for (const auto& price : prices) *out.add_prices() = GpuPriceProto(price);
        return out;
      });
  handlers.Add<v1::CreateGpuPriceRequest>(
      [uc](const core::RequestContext& ctx, const v1::CreateGpuPriceRequest& req) -> Result<v1::GpuPrice> {
        SEPTA_ASSIGN_OR_RETURN(tenancy::usage::GpuPrice price, GpuPriceFromProto(req.price()));
        SEPTA_ASSIGN_OR_RETURN(const tenancy::usage::GpuPrice created, uc.usage.CreatePrice(ctx, std::move(price)));
        return GpuPriceProto(created);
      });
}

}  // namespace septa::apiv1
