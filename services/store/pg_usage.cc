// core::UsageRepository on migrations/0023_usage.sql. A node's scrape (8
// GPUs every 30 s, on 1,000 nodes) is a few set-based statements, each
// given its rows as one jsonb array (libpqxx 6 has no array parameters),
// never a statement per row.
#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <sstream>

#include "services/store/pg_capacity_values.h"
#include "services/store/pg_repositories.h"
#include "services/store/pg_values.h"

namespace septa::store {
namespace {

using core::GpuPrice;
using core::UsageBucket;
using core::UsageIdleState;
using core::UsagePoolBucket;
using core::UsageResolution;
using nlohmann::json;

// The tables of one resolution and the column that holds their bucket's start.
struct UsageTablesOf {
  const char* entity;
  const char* pool;
  const char* bucket;
};
constexpr UsageTablesOf kUsageTables[] = {
    {"usage_minutes", "usage_pool_minutes", "minute"},
    {"usage_hours", "usage_pool_hours", "hour"},
    {"usage_days", "usage_pool_days", "day"},
};
const UsageTablesOf& TablesOf(UsageResolution resolution) { return kUsageTables[static_cast<int>(resolution)]; }

std::string UsageQueryName(UsageResolution resolution, bool one_tenant) {
  return std::string("usage_query_") + TablesOf(resolution).bucket + (one_tenant ? "_tenant" : "");
}
std::string UsagePoolQueryName(UsageResolution resolution) {
  return std::string("usage_pool_query_") + TablesOf(resolution).bucket;
}

// A figure as jsonb_to_recordset reads it into a double precision column:
// a JSON number, or the text of NaN or ±Infinity (which JSON cannot write),
// so that the column's constraint refuses it by name.
json UsageFigure(double x) {
  if (std::isnan(x)) return "NaN";
  if (std::isinf(x)) return x > 0 ? "Infinity" : "-Infinity";
  return x;
}
json OptionalUsageFigure(const std::optional<double>& x) { return x ? UsageFigure(*x) : json(nullptr); }
std::optional<double> OptionalDouble(const pqxx::field& f) {
  if (f.is_null()) return std::nullopt;
  return f.as<double>();
}

std::string MinuteRecords(const std::vector<core::UsageMinuteRow>& rows) {
  json records = json::array();
  for (const core::UsageMinuteRow& r : rows) {
    records.push_back({{"minute", Micros(r.minute)},
                       {"tenant", r.entity.tenant},
                       {"vcluster", r.entity.vcluster},
                       {"node", r.entity.node},
                       {"gpu_uuid", r.entity.gpu_uuid},
                       {"gi_id", r.entity.gi_id},
                       {"tier", std::string(gpu::TierName(r.tier))},
                       {"model", r.model},
                       {"mig_profile", r.mig_profile},
                       {"weight", UsageFigure(r.weight)},
                       {"allocated_gpu_seconds", UsageFigure(r.allocated_gpu_seconds)},
                       {"measured_gpu_seconds", UsageFigure(r.measured_gpu_seconds)},
                       {"used_gpu_seconds", UsageFigure(r.used_gpu_seconds)},
                       {"waste_gpu_seconds", UsageFigure(r.waste_gpu_seconds)},
                       {"cost", UsageFigure(r.cost)},
                       {"activity_max", UsageFigure(r.activity_max)},
                       {"reserved_memory_mib", UsageFigure(r.reserved_memory_mib)},
                       {"used_memory_mib", OptionalUsageFigure(r.used_memory_mib)},
                       {"samples", r.samples}});
  }
  return records.dump();
}

std::string PoolRecords(const std::vector<core::UsagePoolMinuteRow>& rows) {
  json records = json::array();
  for (const core::UsagePoolMinuteRow& r : rows) {
    records.push_back({{"minute", Micros(r.minute)},
                       {"node", r.node},
                       {"gpu_uuid", r.gpu_uuid},
                       {"model", r.model},
                       {"capacity_gpu_seconds", UsageFigure(r.capacity_gpu_seconds)},
                       {"reserved_gpu_seconds", UsageFigure(r.reserved_gpu_seconds)},
                       {"used_gpu_seconds", UsageFigure(r.used_gpu_seconds)}});
  }
  return records.dump();
}

std::string IdleRecords(const std::vector<UsageIdleState>& states) {
  json records = json::array();
  for (const UsageIdleState& s : states) {
    records.push_back({{"tenant", s.entity.tenant},
                       {"vcluster", s.entity.vcluster},
                       {"node", s.entity.node},
                       {"gpu_uuid", s.entity.gpu_uuid},
                       {"gi_id", s.entity.gi_id},
                       {"tier", std::string(gpu::TierName(s.tier))},
                       {"window_start", Micros(s.window_start)},
                       {"window_activity_max", UsageFigure(s.window_activity_max)},
                       {"window_used_memory_mib", OptionalUsageFigure(s.window_used_memory_mib)},
                       {"idle_ms", s.idle_ms},
                       {"holding_memory", s.holding_memory},
                       {"updated", Micros(s.updated)}});
  }
  return records.dump();
}

constexpr char kMinuteRecordColumns[] =
    "jsonb_to_recordset($1::jsonb) AS r(minute bigint, tenant text, vcluster text, node text, gpu_uuid text,"
    " gi_id integer, tier text, model text, mig_profile text, weight double precision,"
    " allocated_gpu_seconds double precision, measured_gpu_seconds double precision,"
    " used_gpu_seconds double precision, waste_gpu_seconds double precision, cost double precision,"
    " activity_max double precision, reserved_memory_mib double precision, used_memory_mib double precision,"
    " samples integer)";

constexpr char kPoolRecordColumns[] =
    "jsonb_to_recordset($1::jsonb) AS r(minute bigint, node text, gpu_uuid text, model text,"
    " capacity_gpu_seconds double precision, reserved_gpu_seconds double precision,"
    " used_gpu_seconds double precision)";

// What a later scrape does to the row `alias` already holds: adds its sums
// and keeps the largest memory (GREATEST ignores NULL: NULL only when
// neither was sampled).
std::string AddedUsageSet(const std::string& alias) {
  std::string set;
  for (const char* sum :
       {"allocated_gpu_seconds", "measured_gpu_seconds", "used_gpu_seconds", "waste_gpu_seconds", "cost", "samples"}) {
    set += std::string(sum) + " = " + alias + "." + sum + " + excluded." + sum + ", ";
  }
  return set + "reserved_memory_mib = GREATEST(" + alias + ".reserved_memory_mib, excluded.reserved_memory_mib)," +
         " used_memory_mib = GREATEST(" + alias + ".used_memory_mib, excluded.used_memory_mib)";
}

std::string AddedPoolSet(const std::string& alias) {
  std::string set;
  for (const char* sum : {"capacity_gpu_seconds", "reserved_gpu_seconds", "used_gpu_seconds"}) {
    set += std::string(set.empty() ? "" : ", ") + sum + " = " + alias + "." + sum + " + excluded." + sum;
  }
  return set;
}

// The minutes of `r` summed into the buckets of `table` (`unit`: hour or
// day, in UTC). Ordered by key, so that scrapes of different nodes adding
// to the same buckets lock them in one order.
std::string UsageRollupSql(const std::string& table, const std::string& unit) {
  return "INSERT INTO " + table + " AS b (" + unit +
         ", tenant, vcluster, tier, model, mig_profile, allocated_gpu_seconds, measured_gpu_seconds,"
         " used_gpu_seconds, waste_gpu_seconds, cost, reserved_memory_mib, used_memory_mib, samples)"
         " SELECT date_trunc('" +
         unit +
         "', septa_ts(minute), 'UTC'), tenant, vcluster, tier, model, mig_profile, sum(allocated_gpu_seconds),"
         " sum(measured_gpu_seconds), sum(used_gpu_seconds), sum(waste_gpu_seconds), sum(cost),"
         " max(reserved_memory_mib), max(used_memory_mib), sum(samples)"
         " FROM r GROUP BY 1, 2, 3, 4, 5, 6 ORDER BY 1, 2, 3, 4, 5, 6"
         " ON CONFLICT (" +
         unit + ", tenant, vcluster, tier, model, mig_profile) DO UPDATE SET " + AddedUsageSet("b");
}

std::string PoolRollupSql(const std::string& table, const std::string& unit) {
  return "INSERT INTO " + table + " AS b (" + unit +
         ", model, capacity_gpu_seconds, reserved_gpu_seconds, used_gpu_seconds)"
         " SELECT date_trunc('" +
         unit +
         "', septa_ts(minute), 'UTC'), model, sum(capacity_gpu_seconds), sum(reserved_gpu_seconds),"
         " sum(used_gpu_seconds) FROM r GROUP BY 1, 2 ORDER BY 1, 2 ON CONFLICT (" +
         unit + ", model) DO UPDATE SET " + AddedPoolSet("b");
}

// Buckets of $3 microseconds from $1 over [$1, $2), grouped by the
// dimensions whose flag ($4..$8) is set; the others read ''.
std::string UsageQuerySql(const UsageTablesOf& tables, bool one_tenant) {
  const std::string bucket = std::string("u.") + tables.bucket;
  return "SELECT septa_micros(date_bin($3::bigint * interval '1 microsecond', " + bucket +
         ", septa_ts($1))),"
         " CASE WHEN $4 THEN u.tenant ELSE '' END, CASE WHEN $5 THEN u.vcluster ELSE '' END,"
         " CASE WHEN $6 THEN u.tier ELSE '' END, CASE WHEN $7 THEN u.model ELSE '' END,"
         " CASE WHEN $8 THEN u.mig_profile ELSE '' END, sum(u.allocated_gpu_seconds),"
         " sum(u.measured_gpu_seconds), sum(u.used_gpu_seconds), sum(u.waste_gpu_seconds), sum(u.cost),"
         " max(u.reserved_memory_mib), max(u.used_memory_mib) FROM " +
         tables.entity + " u WHERE " + bucket + " >= septa_ts($1) AND " + bucket + " < septa_ts($2)" +
         (one_tenant ? " AND u.tenant = $9" : "") + " GROUP BY 1, 2, 3, 4, 5, 6 ORDER BY 1, 2, 3, 4, 5, 6";
}

std::string PoolQuerySql(const UsageTablesOf& tables) {
  const std::string bucket = std::string("p.") + tables.bucket;
  return "SELECT septa_micros(date_bin($3::bigint * interval '1 microsecond', " + bucket +
         ", septa_ts($1))), CASE WHEN $4 THEN p.model ELSE '' END, sum(p.capacity_gpu_seconds),"
         " sum(p.reserved_gpu_seconds), sum(p.used_gpu_seconds) FROM " +
         tables.pool + " p WHERE " + bucket + " >= septa_ts($1) AND " + bucket + " < septa_ts($2)" +
         " GROUP BY 1, 2 ORDER BY 1, 2";
}

constexpr char kIdleColumns[] =
    "tenant, vcluster, node, gpu_uuid, gi_id, tier, septa_micros(window_start), window_activity_max,"
    " window_used_memory_mib, idle_ms, holding_memory, septa_micros(updated)";

UsageIdleState IdleStateOf(const pqxx::row& r) {
  return {.entity = {.tenant = r[0].as<std::string>(),
                     .vcluster = r[1].as<std::string>(),
                     .node = r[2].as<std::string>(),
                     .gpu_uuid = r[3].as<std::string>(),
                     .gi_id = r[4].as<int>()},
          .tier = TierOf(r[5].as<std::string>()),
          .window_start = FromMicros(r[6].as<std::int64_t>()),
          .window_activity_max = r[7].as<double>(),
          .window_used_memory_mib = OptionalDouble(r[8]),
          .idle_ms = r[9].as<std::int64_t>(),
          .holding_memory = r[10].as<bool>(),
          .updated = FromMicros(r[11].as<std::int64_t>())};
}

std::int64_t StrideMicros(TimePoint start, TimePoint end, std::chrono::seconds step) {
  return std::chrono::duration_cast<std::chrono::microseconds>(core::UsageBucketStride(start, end, step)).count();
}

bool GroupsBy(const std::vector<core::UsageDimension>& group_by, core::UsageDimension dimension) {
  return std::find(group_by.begin(), group_by.end(), dimension) != group_by.end();
}

}  // namespace

void PgUsage::Prepare(pqxx::connection& c) {
  c.prepare("usage_cursor_get", "SELECT septa_micros(accounted_until) FROM usage_cursors WHERE node = $1");
  // The compare-and-set of Record: a node never accounted has no row.
  c.prepare(
      "usage_cursor_insert",
      "INSERT INTO usage_cursors (node, accounted_until) VALUES ($1, septa_ts($2)) ON CONFLICT (node) DO NOTHING");
  c.prepare(
      "usage_cursor_move",
      "UPDATE usage_cursors SET accounted_until = septa_ts($2) WHERE node = $1 AND accounted_until = septa_ts($3)");
  const std::string minute_records = kMinuteRecordColumns;
  c.prepare("usage_minutes_add",
            "INSERT INTO usage_minutes AS m (minute, tenant, vcluster, node, gpu_uuid, gi_id, tier, model, mig_profile,"
            " weight, allocated_gpu_seconds, measured_gpu_seconds, used_gpu_seconds, waste_gpu_seconds, cost,"
            " activity_max, reserved_memory_mib, used_memory_mib, samples)"
            " SELECT septa_ts(r.minute), r.tenant, r.vcluster, r.node, r.gpu_uuid, r.gi_id, r.tier, r.model,"
            " r.mig_profile, r.weight, r.allocated_gpu_seconds, r.measured_gpu_seconds, r.used_gpu_seconds,"
            " r.waste_gpu_seconds, r.cost, r.activity_max, r.reserved_memory_mib, r.used_memory_mib, r.samples"
            " FROM " +
                minute_records + " ON CONFLICT (minute, tenant, vcluster, node, gpu_uuid, gi_id) DO UPDATE SET " +
                AddedUsageSet("m") + ", activity_max = GREATEST(m.activity_max, excluded.activity_max)");
  // After usage_minutes_add, whose constraints have checked every figure.
  c.prepare("usage_rollups_add", "WITH r AS (SELECT * FROM " + minute_records + "), hours AS (" +
                                     UsageRollupSql("usage_hours", "hour") + ") " +
                                     UsageRollupSql("usage_days", "day"));
  const std::string pool_records = kPoolRecordColumns;
  c.prepare("usage_pool_minutes_add",
            "INSERT INTO usage_pool_minutes AS p (minute, node, gpu_uuid, model, capacity_gpu_seconds,"
            " reserved_gpu_seconds, used_gpu_seconds) SELECT septa_ts(r.minute), r.node, r.gpu_uuid, r.model,"
            " r.capacity_gpu_seconds, r.reserved_gpu_seconds, r.used_gpu_seconds FROM " +
                pool_records + " ON CONFLICT (minute, node, gpu_uuid) DO UPDATE SET " + AddedPoolSet("p"));
  c.prepare("usage_pool_rollups_add", "WITH r AS (SELECT * FROM " + pool_records + "), hours AS (" +
                                          PoolRollupSql("usage_pool_hours", "hour") + ") " +
                                          PoolRollupSql("usage_pool_days", "day"));
  const std::string idle_columns = kIdleColumns;
  c.prepare(
      "usage_idle_of_node",
      "SELECT " + idle_columns + " FROM usage_idle WHERE node = $1 ORDER BY tenant, vcluster, node, gpu_uuid, gi_id");
  c.prepare("usage_idle_all",
            "SELECT " + idle_columns + " FROM usage_idle ORDER BY tenant, vcluster, node, gpu_uuid, gi_id");
  c.prepare("usage_idle_delete", "DELETE FROM usage_idle WHERE node = $1");
  c.prepare("usage_idle_insert",
            "INSERT INTO usage_idle (tenant, vcluster, node, gpu_uuid, gi_id, tier, window_start,"
            " window_activity_max, window_used_memory_mib, idle_ms, holding_memory, updated)"
            " SELECT r.tenant, r.vcluster, r.node, r.gpu_uuid, r.gi_id, r.tier, septa_ts(r.window_start),"
            " r.window_activity_max, r.window_used_memory_mib, r.idle_ms, r.holding_memory, septa_ts(r.updated)"
            " FROM jsonb_to_recordset($1::jsonb) AS r(tenant text, vcluster text, node text, gpu_uuid text,"
            " gi_id integer, tier text, window_start bigint, window_activity_max double precision,"
            " window_used_memory_mib double precision, idle_ms bigint, holding_memory boolean, updated bigint)");
  for (const UsageResolution resolution : {UsageResolution::kMinute, UsageResolution::kHour, UsageResolution::kDay}) {
    for (const bool one_tenant : {false, true}) {
      c.prepare(UsageQueryName(resolution, one_tenant), UsageQuerySql(TablesOf(resolution), one_tenant));
    }
    c.prepare(UsagePoolQueryName(resolution), PoolQuerySql(TablesOf(resolution)));
  }
  c.prepare("usage_prices",
            "SELECT model, tier, mig_profile, per_gpu_hour, septa_micros(valid_from) FROM gpu_prices"
            " ORDER BY model, tier, mig_profile, valid_from");
  c.prepare("usage_price_insert",
            "INSERT INTO gpu_prices (model, tier, mig_profile, per_gpu_hour, valid_from)"
            " VALUES ($1, $2, $3, $4, septa_ts($5)) ON CONFLICT (model, tier, mig_profile, valid_from) DO NOTHING");
  c.prepare("usage_price_get",
            "SELECT per_gpu_hour FROM gpu_prices"
            " WHERE model = $1 AND tier = $2 AND mig_profile = $3 AND valid_from = septa_ts($4)");
  // Oldest first through the primary keys (minute first), in bounded batches.
  c.prepare("usage_minutes_delete_before",
            "DELETE FROM usage_minutes WHERE ctid IN (SELECT ctid FROM usage_minutes WHERE minute < septa_ts($1)"
            " ORDER BY minute LIMIT $2)");
  c.prepare("usage_pool_minutes_delete_before",
            "DELETE FROM usage_pool_minutes WHERE ctid IN (SELECT ctid FROM usage_pool_minutes"
            " WHERE minute < septa_ts($1) ORDER BY minute LIMIT $2)");
}

Result<std::optional<TimePoint>> PgUsage::Cursor(const std::string& node) {
  return work_.Read<std::optional<TimePoint>>([&](pqxx::transaction_base& t) -> std::optional<TimePoint> {
    const auto rows = t.exec_prepared("usage_cursor_get", node);
    if (rows.empty()) return std::nullopt;
    return FromMicros(rows[0][0].as<std::int64_t>());
  });
}

Status PgUsage::Record(const core::UsageScrapeBatch& batch) {
  SEPTA_RETURN_IF_ERROR(core::CheckUsageBatch(batch));
  const std::string minutes = MinuteRecords(batch.minutes);
  const std::string pool = PoolRecords(batch.pool);
  const std::string idle = IdleRecords(batch.idle);
  // One savepoint: a row the constraints refuse undoes the cursor's move too.
  auto moved = work_.Write([&](pqxx::transaction_base& w) {
    const pqxx::result cursor =
        batch.expected_cursor
            ? w.exec_prepared("usage_cursor_move", batch.node, Micros(batch.cursor), Micros(*batch.expected_cursor))
            : w.exec_prepared("usage_cursor_insert", batch.node, Micros(batch.cursor));
    if (cursor.affected_rows() == 0) return cursor;  // accounted by another scrape: write nothing
    if (!batch.minutes.empty()) {
      w.exec_prepared("usage_minutes_add", minutes);
      w.exec_prepared("usage_rollups_add", minutes);
    }
    if (!batch.pool.empty()) {
      w.exec_prepared("usage_pool_minutes_add", pool);
      w.exec_prepared("usage_pool_rollups_add", pool);
    }
    w.exec_prepared("usage_idle_delete", batch.node);
    if (!batch.idle.empty()) w.exec_prepared("usage_idle_insert", idle);
    return cursor;
  });
  if (!moved.ok()) return moved.status();
  if (*moved == 0) {
    return FailedPrecondition("the usage of node \"" + batch.node +
                              "\" was accounted by another scrape since its cursor was read");
  }
  return Status::Ok();
}

Result<std::vector<UsageIdleState>> PgUsage::IdleStates(const std::string& node) {
  return work_.Read<std::vector<UsageIdleState>>([&](pqxx::transaction_base& t) {
    std::vector<UsageIdleState> states;
    for (const auto& row : t.exec_prepared("usage_idle_of_node", node)) states.push_back(IdleStateOf(row));
    return states;
  });
}

Result<std::vector<UsageIdleState>> PgUsage::AllIdleStates() {
  return work_.Read<std::vector<UsageIdleState>>([&](pqxx::transaction_base& t) {
    std::vector<UsageIdleState> states;
    for (const auto& row : t.exec_prepared("usage_idle_all")) states.push_back(IdleStateOf(row));
    return states;
  });
}

Result<std::vector<UsageBucket>> PgUsage::Query(const core::UsageQuery& q) {
  SEPTA_RETURN_IF_ERROR(core::CheckUsageWindow(q.start, q.end, q.resolution, q.step));
  using core::UsageDimension;
  const bool by_vcluster = GroupsBy(q.group_by, UsageDimension::kVcluster);
  const bool by_tenant = by_vcluster || GroupsBy(q.group_by, UsageDimension::kTenant);
  const bool by_tier = GroupsBy(q.group_by, UsageDimension::kTier);
  const bool by_model = GroupsBy(q.group_by, UsageDimension::kModel);
  const bool by_mig_profile = GroupsBy(q.group_by, UsageDimension::kMigProfile);
  return work_.Read<std::vector<UsageBucket>>([&](pqxx::transaction_base& t) {
    const std::int64_t start = Micros(q.start), end = Micros(q.end), stride = StrideMicros(q.start, q.end, q.step);
    const pqxx::result rows = q.tenant.empty()
                                  ? t.exec_prepared(UsageQueryName(q.resolution, false), start, end, stride, by_tenant,
                                                    by_vcluster, by_tier, by_model, by_mig_profile)
                                  : t.exec_prepared(UsageQueryName(q.resolution, true), start, end, stride, by_tenant,
                                                    by_vcluster, by_tier, by_model, by_mig_profile, q.tenant);
    std::vector<UsageBucket> buckets;
    for (const auto& r : rows) {
      buckets.push_back({.start = FromMicros(r[0].as<std::int64_t>()),
                         .tenant = r[1].as<std::string>(),
                         .vcluster = r[2].as<std::string>(),
                         .tier = r[3].as<std::string>(),
                         .model = r[4].as<std::string>(),
                         .mig_profile = r[5].as<std::string>(),
                         .allocated_gpu_seconds = r[6].as<double>(),
                         .measured_gpu_seconds = r[7].as<double>(),
                         .used_gpu_seconds = r[8].as<double>(),
                         .waste_gpu_seconds = r[9].as<double>(),
                         .cost = r[10].as<double>(),
                         .reserved_memory_mib = r[11].as<double>(),
                         .used_memory_mib = OptionalDouble(r[12])});
    }
    return buckets;
  });
}

Result<std::vector<UsagePoolBucket>> PgUsage::QueryPool(const core::UsagePoolQuery& q) {
  SEPTA_RETURN_IF_ERROR(core::CheckUsageWindow(q.start, q.end, q.resolution, q.step));
  return work_.Read<std::vector<UsagePoolBucket>>([&](pqxx::transaction_base& t) {
    std::vector<UsagePoolBucket> buckets;
    for (const auto& r : t.exec_prepared(UsagePoolQueryName(q.resolution), Micros(q.start), Micros(q.end),
                                         StrideMicros(q.start, q.end, q.step), q.by_model)) {
      buckets.push_back({.start = FromMicros(r[0].as<std::int64_t>()),
                         .model = r[1].as<std::string>(),
                         .capacity_gpu_seconds = r[2].as<double>(),
                         .reserved_gpu_seconds = r[3].as<double>(),
                         .used_gpu_seconds = r[4].as<double>()});
    }
    return buckets;
  });
}

Result<std::vector<GpuPrice>> PgUsage::Prices() {
  return work_.Read<std::vector<GpuPrice>>([&](pqxx::transaction_base& t) {
    std::vector<GpuPrice> prices;
    for (const auto& r : t.exec_prepared("usage_prices")) {
      prices.push_back({.model = r[0].as<std::string>(),
                        .tier = TierOf(r[1].as<std::string>()),
                        .mig_profile = r[2].as<std::string>(),
                        .per_gpu_hour = r[3].as<double>(),
                        .valid_from = FromMicros(r[4].as<std::int64_t>())});
    }
    return prices;
  });
}

Status PgUsage::PutPrice(const GpuPrice& p) {
  const std::string tier(gpu::TierName(p.tier));
  auto inserted = work_.Write([&](pqxx::transaction_base& w) {
    return w.exec_prepared("usage_price_insert", p.model, tier, p.mig_profile, p.per_gpu_hour, Micros(p.valid_from));
  });
  if (!inserted.ok()) return inserted.status();
  if (*inserted == 1) return Status::Ok();
  SEPTA_ASSIGN_OR_RETURN(const double in_force, work_.Read<double>([&](pqxx::transaction_base& t) {
    return t.exec_prepared("usage_price_get", p.model, tier, p.mig_profile, Micros(p.valid_from))[0][0].as<double>();
  }));
  if (in_force == p.per_gpu_hour) return Status::Ok();  // the same price again
  std::ostringstream rate;
  rate << in_force;
  return FieldError(Code::kAlreadyExists, "per_gpu_hour",
                    "the price from " + FormatRfc3339(p.valid_from) + " is " + rate.str() +
                        ", and a price once set never changes (past bills used it): give a later valid_from");
}

Result<int> PgUsage::DeleteMinutesBefore(TimePoint cutoff, int limit) {
  if (limit < 1) return InvalidField("limit", "must be positive");
  std::size_t entity_rows = 0;
  auto pool_rows = work_.Write([&](pqxx::transaction_base& w) {
    entity_rows = w.exec_prepared("usage_minutes_delete_before", Micros(cutoff), limit).affected_rows();
    return w.exec_prepared("usage_pool_minutes_delete_before", Micros(cutoff), limit - static_cast<int>(entity_rows));
  });
  if (!pool_rows.ok()) return pool_rows.status();
  return static_cast<int>(entity_rows + *pool_rows);
}

}  // namespace septa::store
