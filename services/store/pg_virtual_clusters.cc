#include "services/store/pg_capacity.h"

#include "services/store/pg_capacity_values.h"
#include "services/store/pg_values.h"
#include "tenancy/virtual_cluster_ref.h"

namespace septa::store {
namespace {

using tenancy::VirtualCluster;

constexpr char kColumns[] =
    "tenant, name, display_name, capacity_tier, capacity::text, quota_cpu_milli, quota_memory_mib, quota_pods, "
    "queue_priority, queue_over_quota_weight, state, conditions::text, host_namespace, endpoint, generation, "
    "version, septa_micros(create_time), septa_micros(update_time), on_host, api_limits_objects, "
    "api_limits_object_bytes, api_limits_watches, api_limits_requests_in_flight";

VirtualCluster VirtualClusterOf(const pqxx::row& r) {
  VirtualCluster v;
  v.tenant = r[0].as<std::string>();
  v.name = r[1].as<std::string>();
  v.display_name = r[2].as<std::string>();
  v.capacity = CapacityOf(TierOf(r[3].as<std::string>()), r[4].as<std::string>());
  v.quota = {r[5].as<std::int64_t>(), r[6].as<std::int64_t>(), r[7].as<std::int64_t>()};
  v.queue = {r[8].as<int>(), r[9].as<int>()};
  v.state = VirtualClusterStateOf(r[10].as<std::string>());
  v.conditions = ConditionsOf(r[11].as<std::string>());
  v.host_namespace = r[12].as<std::string>();
  v.endpoint = r[13].as<std::string>();
  v.generation = r[14].as<std::int64_t>();
  v.version = r[15].as<std::int64_t>();
  v.create_time = FromMicros(r[16].as<std::int64_t>());
  v.update_time = FromMicros(r[17].as<std::int64_t>());
  v.on_host = r[18].as<bool>();
  v.api_limits = {OptionalInt64(r[19]), OptionalInt64(r[20]), OptionalInt64(r[21]), OptionalInt64(r[22])};
  return v;
}

// The API limits as the four nullable parameters of vcluster_insert and vcluster_update (NULL: the tier's).
struct ApiLimitsParams {
  explicit ApiLimitsParams(const tenancy::ApiLimits& l)
      : objects(l.objects),
        object_bytes(l.object_bytes),
        watches(l.watches),
        requests_in_flight(l.requests_in_flight) {}
  NullableInt64 objects, object_bytes, watches, requests_in_flight;
};

std::string VirtualClusterNameOf(const std::string& tenant, const std::string& name) {
  return "virtual cluster \"" + tenancy::VirtualClusterText(tenant, name) + "\"";
}

}  // namespace

void PgVirtualClusters::Prepare(pqxx::connection& c) {
  const std::string columns = kColumns;
  c.prepare("vcluster_get", "SELECT " + columns + " FROM virtual_clusters WHERE tenant = $1 AND name = $2");
  c.prepare("vcluster_list", "SELECT " + columns +
                                 " FROM virtual_clusters WHERE ($1 = '' OR tenant = $1)"
                                 " AND ($2::text IS NULL OR state = $2::text) AND (tenant, name) > ($3, $4)"
                                 " ORDER BY tenant, name LIMIT $5");
  // Inserts nothing when the tenant does not exist.
  c.prepare("vcluster_insert",
            "INSERT INTO virtual_clusters (tenant, name, display_name, capacity_tier, capacity, quota_cpu_milli,"
            " quota_memory_mib, quota_pods, queue_priority, queue_over_quota_weight, state, conditions,"
            " host_namespace, endpoint, generation, version, create_time, update_time, on_host, api_limits_objects,"
            " api_limits_object_bytes, api_limits_watches, api_limits_requests_in_flight)"
            " SELECT $1::text, $2::text, $3::text, $4::text, $5::jsonb, $6::bigint, $7::bigint, $8::bigint,"
            " $9::integer, $10::integer, $11::text, $12::jsonb, $13::text, $14::text, $15::bigint, $16::bigint,"
            " septa_ts($17), septa_ts($18), $19::boolean, $20::bigint, $21::bigint, $22::bigint, $23::bigint"
            " WHERE EXISTS (SELECT 1 FROM tenants WHERE name = $1::text)");
  c.prepare("vcluster_update",
            "UPDATE virtual_clusters SET display_name = $3, capacity_tier = $4, capacity = $5::jsonb,"
            " quota_cpu_milli = $6, quota_memory_mib = $7, quota_pods = $8, queue_priority = $9,"
            " queue_over_quota_weight = $10, state = $11, conditions = $12::jsonb, host_namespace = $13,"
            " endpoint = $14, generation = $15, version = $16, update_time = septa_ts($17), on_host = $19,"
            " api_limits_objects = $20, api_limits_object_bytes = $21, api_limits_watches = $22,"
            " api_limits_requests_in_flight = $23 WHERE tenant = $1 AND name = $2 AND version = $18");
  c.prepare("vcluster_delete", "DELETE FROM virtual_clusters WHERE tenant = $1 AND name = $2 AND version = $3");
  c.prepare("vcluster_version", "SELECT version FROM virtual_clusters WHERE tenant = $1 AND name = $2");
}

Result<VirtualCluster> PgVirtualClusters::Get(const std::string& tenant, const std::string& name) {
  return work_.Read<VirtualCluster>([&](pqxx::transaction_base& t) -> Result<VirtualCluster> {
    const auto rows = t.exec_prepared("vcluster_get", tenant, name);
    if (rows.empty()) return NotFound(VirtualClusterNameOf(tenant, name) + " not found");
    return VirtualClusterOf(rows[0]);
  });
}

Result<std::vector<VirtualCluster>> PgVirtualClusters::List(const core::VirtualClusterQuery& query) {
  SEPTA_RETURN_IF_ERROR(CheckLimit(query.limit));
  const std::string state = query.state ? std::string(tenancy::VirtualClusterStateName(*query.state)) : "";
  return work_.Read<std::vector<VirtualCluster>>([&](pqxx::transaction_base& t) {
    std::vector<VirtualCluster> vclusters;
    for (const auto& row : t.exec_prepared("vcluster_list", query.tenant, query.state ? state.c_str() : nullptr,
                                           query.after_tenant, query.after_name, query.limit)) {
      vclusters.push_back(VirtualClusterOf(row));
    }
    return vclusters;
  });
}

Status PgVirtualClusters::Insert(const VirtualCluster& v) {
  const ApiLimitsParams limits(v.api_limits);
  auto inserted = work_.Write([&](pqxx::transaction_base& w) {
    return w.exec_prepared(
        "vcluster_insert", v.tenant, v.name, v.display_name, std::string(gpu::TierName(v.capacity.tier)),
        CapacityJson(v.capacity), v.quota.cpu_milli, v.quota.memory_mib, v.quota.pods, v.queue.priority,
        v.queue.over_quota_weight, std::string(tenancy::VirtualClusterStateName(v.state)), ConditionsJson(v.conditions),
        v.host_namespace, v.endpoint, v.generation, v.version, Micros(v.create_time), Micros(v.update_time), v.on_host,
        limits.objects.param(), limits.object_bytes.param(), limits.watches.param(), limits.requests_in_flight.param());
  });
  if (!inserted.ok()) return inserted.status();
  return *inserted == 1 ? Status::Ok() : NotFound("tenant \"" + v.tenant + "\" not found");
}

Status PgVirtualClusters::VersionMismatch(const std::string& tenant, const std::string& name,
                                          std::int64_t expected_version) {
  auto current = work_.Read<std::int64_t>([&](pqxx::transaction_base& t) -> Result<std::int64_t> {
    const auto rows = t.exec_prepared("vcluster_version", tenant, name);
    if (rows.empty()) return NotFound(VirtualClusterNameOf(tenant, name) + " not found");
    return rows[0][0].as<std::int64_t>();
  });
  if (!current.ok()) return current.status();
  return Aborted(VirtualClusterNameOf(tenant, name) + " is at version " + std::to_string(*current) + ", not " +
                 std::to_string(expected_version));
}

Status PgVirtualClusters::Update(const VirtualCluster& v, std::int64_t expected_version) {
  const ApiLimitsParams limits(v.api_limits);
  auto updated = work_.Write([&](pqxx::transaction_base& w) {
    return w.exec_prepared(
        "vcluster_update", v.tenant, v.name, v.display_name, std::string(gpu::TierName(v.capacity.tier)),
        CapacityJson(v.capacity), v.quota.cpu_milli, v.quota.memory_mib, v.quota.pods, v.queue.priority,
        v.queue.over_quota_weight, std::string(tenancy::VirtualClusterStateName(v.state)), ConditionsJson(v.conditions),
        v.host_namespace, v.endpoint, v.generation, v.version, Micros(v.update_time), expected_version, v.on_host,
        limits.objects.param(), limits.object_bytes.param(), limits.watches.param(), limits.requests_in_flight.param());
  });
  if (!updated.ok()) return updated.status();
  return *updated == 1 ? Status::Ok() : VersionMismatch(v.tenant, v.name, expected_version);
}

Status PgVirtualClusters::Delete(const std::string& tenant, const std::string& name, std::int64_t expected_version) {
  auto deleted = work_.Write(
      [&](pqxx::transaction_base& w) { return w.exec_prepared("vcluster_delete", tenant, name, expected_version); });
  if (!deleted.ok()) return deleted.status();
  return *deleted == 1 ? Status::Ok() : VersionMismatch(tenant, name, expected_version);
}

}  // namespace septa::store
