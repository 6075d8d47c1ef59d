#include "tests/support/fake_usage.h"

#include <algorithm>
#include <cmath>
#include <sstream>

namespace septa::core {
namespace {

using RollupKey = FakeStore::State::UsageRollupKey;
using PoolRollupKey = std::pair<TimePoint, std::string>;

// The CHECK constraints of migrations/0023_usage.sql, with PgStore's field names.
constexpr char kUsageFigure[] = "must be a finite number, not negative";

Status CheckUsageFigure(const std::string& field, double figure) {
  if (!std::isfinite(figure) || figure < 0) return InvalidField(field, kUsageFigure);
  return Status::Ok();
}

Status CheckUsageGiId(const std::string& field, int gi_id) {
  if (gi_id < -1) return InvalidField(field, "must be -1 (a whole GPU or a share) or a GPU-instance id");
  return Status::Ok();
}

Status CheckMinuteRow(const UsageMinuteRow& r) {
  SEPTA_RETURN_IF_ERROR(CheckUsageGiId("minutes.entity.gi_id", r.entity.gi_id));
  const std::pair<const char*, double> figures[] = {{"minutes.weight", r.weight},
                                                    {"minutes.allocated_gpu_seconds", r.allocated_gpu_seconds},
                                                    {"minutes.measured_gpu_seconds", r.measured_gpu_seconds},
                                                    {"minutes.used_gpu_seconds", r.used_gpu_seconds},
                                                    {"minutes.waste_gpu_seconds", r.waste_gpu_seconds},
                                                    {"minutes.cost", r.cost},
                                                    {"minutes.activity_max", r.activity_max},
                                                    {"minutes.reserved_memory_mib", r.reserved_memory_mib}};
  for (const auto& [field, figure] : figures) SEPTA_RETURN_IF_ERROR(CheckUsageFigure(field, figure));
  if (r.used_memory_mib) SEPTA_RETURN_IF_ERROR(CheckUsageFigure("minutes.used_memory_mib", *r.used_memory_mib));
  if (r.samples < 0) return InvalidField("minutes.samples", "must not be negative");
  return Status::Ok();
}

Status CheckPoolRow(const UsagePoolMinuteRow& r) {
  SEPTA_RETURN_IF_ERROR(CheckUsageFigure("pool.capacity_gpu_seconds", r.capacity_gpu_seconds));
  SEPTA_RETURN_IF_ERROR(CheckUsageFigure("pool.reserved_gpu_seconds", r.reserved_gpu_seconds));
  return CheckUsageFigure("pool.used_gpu_seconds", r.used_gpu_seconds);
}

Status CheckIdleState(const UsageIdleState& s) {
  SEPTA_RETURN_IF_ERROR(CheckUsageGiId("idle.entity.gi_id", s.entity.gi_id));
  SEPTA_RETURN_IF_ERROR(CheckUsageFigure("idle.window_activity_max", s.window_activity_max));
  if (s.window_used_memory_mib) {
    SEPTA_RETURN_IF_ERROR(CheckUsageFigure("idle.window_used_memory_mib", *s.window_used_memory_mib));
  }
  if (s.idle_ms < 0) return InvalidField("idle.idle_ms", "must not be negative");
  return Status::Ok();
}

// GREATEST in SQL: NULL only when both are.
std::optional<double> GreatestMemory(const std::optional<double>& a, const std::optional<double>& b) {
  if (!a) return b;
  if (!b) return a;
  return std::max(*a, *b);
}

// What the upserts of PgUsage do to a row already there.
void AddUsage(UsageBucket& into, const UsageBucket& added) {
  into.allocated_gpu_seconds += added.allocated_gpu_seconds;
  into.measured_gpu_seconds += added.measured_gpu_seconds;
  into.used_gpu_seconds += added.used_gpu_seconds;
  into.waste_gpu_seconds += added.waste_gpu_seconds;
  into.cost += added.cost;
  into.reserved_memory_mib = std::max(into.reserved_memory_mib, added.reserved_memory_mib);
  into.used_memory_mib = GreatestMemory(into.used_memory_mib, added.used_memory_mib);
}

void AddPool(UsagePoolBucket& into, const UsagePoolBucket& added) {
  into.capacity_gpu_seconds += added.capacity_gpu_seconds;
  into.reserved_gpu_seconds += added.reserved_gpu_seconds;
  into.used_gpu_seconds += added.used_gpu_seconds;
}

void AddMinute(UsageMinuteRow& into, const UsageMinuteRow& added) {
  into.allocated_gpu_seconds += added.allocated_gpu_seconds;
  into.measured_gpu_seconds += added.measured_gpu_seconds;
  into.used_gpu_seconds += added.used_gpu_seconds;
  into.waste_gpu_seconds += added.waste_gpu_seconds;
  into.cost += added.cost;
  into.activity_max = std::max(into.activity_max, added.activity_max);
  into.reserved_memory_mib = std::max(into.reserved_memory_mib, added.reserved_memory_mib);
  into.used_memory_mib = GreatestMemory(into.used_memory_mib, added.used_memory_mib);
  into.samples += added.samples;
}

// A minute row as a bucket of its own that starts at `start`.
UsageBucket BucketOfMinute(const UsageMinuteRow& r, TimePoint start) {
  return {.start = start,
          .tenant = r.entity.tenant,
          .vcluster = r.entity.vcluster,
          .tier = std::string(gpu::TierName(r.tier)),
          .model = r.model,
          .mig_profile = r.mig_profile,
          .allocated_gpu_seconds = r.allocated_gpu_seconds,
          .measured_gpu_seconds = r.measured_gpu_seconds,
          .used_gpu_seconds = r.used_gpu_seconds,
          .waste_gpu_seconds = r.waste_gpu_seconds,
          .cost = r.cost,
          .reserved_memory_mib = r.reserved_memory_mib,
          .used_memory_mib = r.used_memory_mib};
}

RollupKey KeyOfBucket(const UsageBucket& b) { return {b.start, b.tenant, b.vcluster, b.tier, b.model, b.mig_profile}; }

// date_trunc(unit, t, 'UTC'): down, before the epoch too.
TimePoint UsageTruncated(TimePoint t, std::chrono::seconds unit) {
  TimePoint::duration into = t.time_since_epoch() % unit;
  if (into < into.zero()) into += unit;
  return t - into;
}

// The scrape's minutes summed per bucket of `unit`, then added to what each bucket holds.
void AddUsageRollups(const std::vector<UsageMinuteRow>& minutes, std::chrono::seconds unit,
                     std::map<RollupKey, UsageBucket>& buckets) {
  std::map<RollupKey, UsageBucket> scraped;
  for (const UsageMinuteRow& r : minutes) {
    const UsageBucket b = BucketOfMinute(r, UsageTruncated(r.minute, unit));
    if (auto [it, inserted] = scraped.try_emplace(KeyOfBucket(b), b); !inserted) AddUsage(it->second, b);
  }
  for (const auto& [key, b] : scraped) {
    if (auto [it, inserted] = buckets.try_emplace(key, b); !inserted) AddUsage(it->second, b);
  }
}

void AddPoolRollups(const std::vector<UsagePoolMinuteRow>& pool, std::chrono::seconds unit,
                    std::map<PoolRollupKey, UsagePoolBucket>& buckets) {
  std::map<PoolRollupKey, UsagePoolBucket> scraped;
  for (const UsagePoolMinuteRow& r : pool) {
    const UsagePoolBucket b{.start = UsageTruncated(r.minute, unit),
                            .model = r.model,
                            .capacity_gpu_seconds = r.capacity_gpu_seconds,
                            .reserved_gpu_seconds = r.reserved_gpu_seconds,
                            .used_gpu_seconds = r.used_gpu_seconds};
    if (auto [it, inserted] = scraped.try_emplace({b.start, b.model}, b); !inserted) AddPool(it->second, b);
  }
  for (const auto& [key, b] : scraped) {
    if (auto [it, inserted] = buckets.try_emplace(key, b); !inserted) AddPool(it->second, b);
  }
}

// date_bin(stride, t, start).
TimePoint UsageBucketStart(TimePoint t, TimePoint start, TimePoint::duration stride) {
  return start + (t - start) / stride * stride;
}

bool GroupsByDimension(const std::vector<UsageDimension>& group_by, UsageDimension dimension) {
  return std::find(group_by.begin(), group_by.end(), dimension) != group_by.end();
}

}  // namespace

Result<std::optional<TimePoint>> FakeUsage::Cursor(const std::string& node) {
  const auto it = w_.s.usage_cursors.find(node);
  if (it == w_.s.usage_cursors.end()) return std::optional<TimePoint>();
  return std::optional<TimePoint>(it->second);
}

Status FakeUsage::Record(const UsageScrapeBatch& batch) {
  SEPTA_RETURN_IF_ERROR(CheckUsageBatch(batch));
  SEPTA_RETURN_IF_ERROR(w_.CheckWritable());
  // Compared at PostgreSQL's microseconds.
  const auto cursor = w_.s.usage_cursors.find(batch.node);
  const bool at_expected =
      batch.expected_cursor ? cursor != w_.s.usage_cursors.end() && cursor->second == Truncated(*batch.expected_cursor)
                            : cursor == w_.s.usage_cursors.end();
  if (!at_expected) {
    return FailedPrecondition("the usage of node \"" + batch.node +
                              "\" was accounted by another scrape since its cursor was read");
  }
  for (const UsageMinuteRow& r : batch.minutes) SEPTA_RETURN_IF_ERROR(CheckMinuteRow(r));
  for (const UsagePoolMinuteRow& r : batch.pool) SEPTA_RETURN_IF_ERROR(CheckPoolRow(r));
  for (const UsageIdleState& s : batch.idle) SEPTA_RETURN_IF_ERROR(CheckIdleState(s));

  w_.s.usage_cursors[batch.node] = Truncated(batch.cursor);
  for (const UsageMinuteRow& r : batch.minutes) {
    if (auto [it, inserted] = w_.s.usage_minutes.try_emplace({r.minute, r.entity}, r); !inserted) {
      AddMinute(it->second, r);
    }
  }
  AddUsageRollups(batch.minutes, std::chrono::hours(1), w_.s.usage_hours);
  AddUsageRollups(batch.minutes, std::chrono::days(1), w_.s.usage_days);
  for (const UsagePoolMinuteRow& r : batch.pool) {
    auto [it, inserted] = w_.s.usage_pool_minutes.try_emplace({r.minute, r.node, r.gpu_uuid}, r);
    if (!inserted) {
      it->second.capacity_gpu_seconds += r.capacity_gpu_seconds;
      it->second.reserved_gpu_seconds += r.reserved_gpu_seconds;
      it->second.used_gpu_seconds += r.used_gpu_seconds;
    }
  }
  AddPoolRollups(batch.pool, std::chrono::hours(1), w_.s.usage_pool_hours);
  AddPoolRollups(batch.pool, std::chrono::days(1), w_.s.usage_pool_days);
  std::erase_if(w_.s.usage_idle, [&](const auto& entry) { return entry.first.node == batch.node; });
  for (const UsageIdleState& s : batch.idle) {
    UsageIdleState& stored = w_.s.usage_idle[s.entity] = s;
    stored.window_start = Truncated(s.window_start);
    stored.updated = Truncated(s.updated);
  }
  return Status::Ok();
}

Result<std::vector<UsageIdleState>> FakeUsage::IdleStates(const std::string& node) {
  std::vector<UsageIdleState> states;
  for (const auto& [entity, s] : w_.s.usage_idle) {
    if (entity.node == node) states.push_back(s);
  }
  return states;
}

Result<std::vector<UsageIdleState>> FakeUsage::AllIdleStates() {
  std::vector<UsageIdleState> states;
  for (const auto& [entity, s] : w_.s.usage_idle) states.push_back(s);
  return states;
}

Result<std::vector<UsageBucket>> FakeUsage::Query(const UsageQuery& q) {
  SEPTA_RETURN_IF_ERROR(CheckUsageWindow(q.start, q.end, q.resolution, q.step));
  const bool by_vcluster = GroupsByDimension(q.group_by, UsageDimension::kVcluster);
  const bool by_tenant = by_vcluster || GroupsByDimension(q.group_by, UsageDimension::kTenant);
  const bool by_tier = GroupsByDimension(q.group_by, UsageDimension::kTier);
  const bool by_model = GroupsByDimension(q.group_by, UsageDimension::kModel);
  const bool by_mig_profile = GroupsByDimension(q.group_by, UsageDimension::kMigProfile);
  std::vector<UsageBucket> rows;  // the resolution's rows, each a bucket of its own
  switch (q.resolution) {
    case UsageResolution::kMinute:
      for (const auto& [key, r] : w_.s.usage_minutes) rows.push_back(BucketOfMinute(r, r.minute));
      break;
    case UsageResolution::kHour:
      for (const auto& [key, b] : w_.s.usage_hours) rows.push_back(b);
      break;
    case UsageResolution::kDay:
      for (const auto& [key, b] : w_.s.usage_days) rows.push_back(b);
      break;
  }
  const TimePoint::duration stride = UsageBucketStride(q.start, q.end, q.step);
  std::map<RollupKey, UsageBucket> grouped;
  for (UsageBucket b : rows) {
    if (b.start < q.start || b.start >= q.end || (!q.tenant.empty() && b.tenant != q.tenant)) continue;
    b.start = UsageBucketStart(b.start, q.start, stride);
    if (!by_tenant) b.tenant.clear();
    if (!by_vcluster) b.vcluster.clear();
    if (!by_tier) b.tier.clear();
    if (!by_model) b.model.clear();
    if (!by_mig_profile) b.mig_profile.clear();
    if (auto [it, inserted] = grouped.try_emplace(KeyOfBucket(b), b); !inserted) AddUsage(it->second, b);
  }
  std::vector<UsageBucket> buckets;
  for (const auto& [key, b] : grouped) buckets.push_back(b);
  return buckets;
}

Result<std::vector<UsagePoolBucket>> FakeUsage::QueryPool(const UsagePoolQuery& q) {
  SEPTA_RETURN_IF_ERROR(CheckUsageWindow(q.start, q.end, q.resolution, q.step));
  std::vector<UsagePoolBucket> rows;
  switch (q.resolution) {
    case UsageResolution::kMinute:
      for (const auto& [key, r] : w_.s.usage_pool_minutes) {
        rows.push_back({.start = r.minute,
                        .model = r.model,
                        .capacity_gpu_seconds = r.capacity_gpu_seconds,
                        .reserved_gpu_seconds = r.reserved_gpu_seconds,
                        .used_gpu_seconds = r.used_gpu_seconds});
      }
      break;
    case UsageResolution::kHour:
      for (const auto& [key, b] : w_.s.usage_pool_hours) rows.push_back(b);
      break;
    case UsageResolution::kDay:
      for (const auto& [key, b] : w_.s.usage_pool_days) rows.push_back(b);
      break;
  }
  const TimePoint::duration stride = UsageBucketStride(q.start, q.end, q.step);
  std::map<PoolRollupKey, UsagePoolBucket> grouped;
  for (UsagePoolBucket b : rows) {
    if (b.start < q.start || b.start >= q.end) continue;
    b.start = UsageBucketStart(b.start, q.start, stride);
    if (!q.by_model) b.model.clear();
    if (auto [it, inserted] = grouped.try_emplace({b.start, b.model}, b); !inserted) AddPool(it->second, b);
  }
  std::vector<UsagePoolBucket> buckets;
  for (const auto& [key, b] : grouped) buckets.push_back(b);
  return buckets;
}

Result<std::vector<GpuPrice>> FakeUsage::Prices() {
  std::vector<GpuPrice> prices;
  for (const auto& [key, p] : w_.s.gpu_prices) prices.push_back(p);
  return prices;
}

Status FakeUsage::PutPrice(const GpuPrice& price) {
  SEPTA_RETURN_IF_ERROR(w_.CheckWritable());
  SEPTA_RETURN_IF_ERROR(CheckUsageFigure("per_gpu_hour", price.per_gpu_hour));
  GpuPrice row = price;
  row.valid_from = Truncated(row.valid_from);
  const auto [it, inserted] = w_.s.gpu_prices.try_emplace(
      {row.model, std::string(gpu::TierName(row.tier)), row.mig_profile, row.valid_from}, row);
  if (inserted || it->second.per_gpu_hour == row.per_gpu_hour) return Status::Ok();
  std::ostringstream rate;
  rate << it->second.per_gpu_hour;
  return FieldError(Code::kAlreadyExists, "per_gpu_hour",
                    "the price from " + FormatRfc3339(row.valid_from) + " is " + rate.str() +
                        ", and a price once set never changes (past bills used it): give a later valid_from");
}

Result<int> FakeUsage::DeleteMinutesBefore(TimePoint cutoff, int limit) {
  if (limit < 1) return InvalidField("limit", "must be positive");
  SEPTA_RETURN_IF_ERROR(w_.CheckWritable());
  int deleted = 0;
  for (auto it = w_.s.usage_minutes.begin();
       it != w_.s.usage_minutes.end() && deleted < limit && it->first.first < cutoff; ++deleted) {
    it = w_.s.usage_minutes.erase(it);
  }
  for (auto it = w_.s.usage_pool_minutes.begin();
       it != w_.s.usage_pool_minutes.end() && deleted < limit && std::get<0>(it->first) < cutoff; ++deleted) {
    it = w_.s.usage_pool_minutes.erase(it);
  }
  return deleted;
}

}  // namespace septa::core
