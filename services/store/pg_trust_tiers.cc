#include "services/store/pg_repositories.h"
#include "services/store/pg_values.h"

namespace septa::store {
namespace {

using core::TrustTier;

// The gpu_sharing column's words (trust_tiers_gpu_sharing_known).
std::string SharingText(gpu::Tier tier) {
  switch (tier) {
    case gpu::Tier::kShared: return "fractional";
    case gpu::Tier::kIsolated: return "mig";
    case gpu::Tier::kDedicated: return "whole-gpu";
    case gpu::Tier::kExclusive: return "whole-node";
  }
  return "";
}

gpu::Tier SharingOf(const std::string& text) {
  if (text == "mig") return gpu::Tier::kIsolated;
  if (text == "whole-gpu") return gpu::Tier::kDedicated;
  if (text == "whole-node") return gpu::Tier::kExclusive;
  return gpu::Tier::kShared;  // the CHECK constraint admits nothing else
}

constexpr char kTierColumns[] =
    "name, display_name, description, gpu_sharing, co_tenancy, runtime_class, credential_ttl_max_seconds, "
    "septa_micros(create_time), septa_micros(update_time), api_limits_objects, api_limits_object_bytes, "
    "api_limits_watches, api_limits_requests_in_flight, version";
TrustTier TrustTierOfRow(const pqxx::row& r) {
  return {r[0].as<std::string>(),
          r[1].as<std::string>(),
          r[2].as<std::string>(),
          SharingOf(r[3].as<std::string>()),
          r[4].as<std::string>(),
          r[5].as<std::string>(),
          r[6].as<std::int64_t>(),
          FromMicros(r[7].as<std::int64_t>()),
          FromMicros(r[8].as<std::int64_t>()),
          {r[9].as<std::int64_t>(), r[10].as<std::int64_t>(), r[11].as<std::int64_t>(), r[12].as<std::int64_t>()},
          r[13].as<std::int64_t>()};
}

}  // namespace

void PgTrustTiers::Prepare(pqxx::connection& c) {
  const std::string tier = kTierColumns;
  c.prepare("tier_list", "SELECT " + tier + " FROM trust_tiers ORDER BY name");
  c.prepare("tier_get", "SELECT " + tier + " FROM trust_tiers WHERE name = $1");
  c.prepare("tier_insert",
            "INSERT INTO trust_tiers (name, display_name, description, gpu_sharing, co_tenancy, runtime_class, "
            "credential_ttl_max_seconds, create_time, update_time, api_limits_objects, api_limits_object_bytes, "
            "api_limits_watches, api_limits_requests_in_flight, version) "
            "VALUES ($1, $2, $3, $4, $5, $6, $7, septa_ts($8), septa_ts($9), "
            "$10, $11, $12, $13, $14)");
  c.prepare("tier_update",
            "UPDATE trust_tiers SET display_name = $2, description = $3, gpu_sharing = $4, co_tenancy = $5, "
            "runtime_class = $6, credential_ttl_max_seconds = $7, update_time = septa_ts($8), "
            "api_limits_objects = $9, api_limits_object_bytes = $10, api_limits_watches = $11, "
            "api_limits_requests_in_flight = $12, version = $13 WHERE name = $1 AND version = $14");
  c.prepare("tier_delete", "DELETE FROM trust_tiers WHERE name = $1 AND version = $2");
  c.prepare("tier_version", "SELECT version FROM trust_tiers WHERE name = $1");
}

Result<std::vector<TrustTier>> PgTrustTiers::List() {
  return work_.Read<std::vector<TrustTier>>([&](pqxx::transaction_base& t) {
    std::vector<TrustTier> tiers;
    for (const auto& row : t.exec_prepared("tier_list")) tiers.push_back(TrustTierOfRow(row));
    return tiers;
  });
}

Result<TrustTier> PgTrustTiers::Get(const std::string& name) {
  return work_.Read<TrustTier>([&](pqxx::transaction_base& t) -> Result<TrustTier> {
    const auto rows = t.exec_prepared("tier_get", name);
    if (rows.empty()) return NotFound("trust tier \"" + name + "\" not found");
    return TrustTierOfRow(rows[0]);
  });
}

Status PgTrustTiers::Insert(const TrustTier& t) {
  const tenancy::ApiLimits& l = t.api_limits;
  return ToStatus(work_.Write([&](pqxx::transaction_base& w) {
    return w.exec_prepared("tier_insert", t.name, t.display_name, t.description, SharingText(t.gpu_sharing),
                           t.co_tenancy, t.runtime_class, t.credential_ttl_max_seconds, Micros(t.create_time),
                           Micros(t.update_time), l.objects.value_or(0), l.object_bytes.value_or(0),
                           l.watches.value_or(0), l.requests_in_flight.value_or(0), t.version);
  }));
}

Status PgTrustTiers::VersionMismatch(const std::string& name, std::int64_t expected_version) {
  auto current = work_.Read<std::int64_t>([&](pqxx::transaction_base& t) -> Result<std::int64_t> {
    const auto rows = t.exec_prepared("tier_version", name);
    if (rows.empty()) return NotFound("trust tier \"" + name + "\" not found");
    return rows[0][0].as<std::int64_t>();
  });
  if (!current.ok()) return current.status();
  return Aborted("trust tier \"" + name + "\" is at version " + std::to_string(*current) + ", not " +
                 std::to_string(expected_version));
}

Status PgTrustTiers::Update(const TrustTier& t, std::int64_t expected_version) {
  const tenancy::ApiLimits& l = t.api_limits;
  auto updated = work_.Write([&](pqxx::transaction_base& w) {
    return w.exec_prepared("tier_update", t.name, t.display_name, t.description, SharingText(t.gpu_sharing),
                           t.co_tenancy, t.runtime_class, t.credential_ttl_max_seconds, Micros(t.update_time),
                           l.objects.value_or(0), l.object_bytes.value_or(0), l.watches.value_or(0),
                           l.requests_in_flight.value_or(0), t.version, expected_version);
  });
  if (!updated.ok()) return updated.status();
  return *updated == 1 ? Status::Ok() : VersionMismatch(t.name, expected_version);
}

Status PgTrustTiers::Delete(const std::string& name, std::int64_t expected_version) {
  auto deleted =
      work_.Write([&](pqxx::transaction_base& w) { return w.exec_prepared("tier_delete", name, expected_version); });
  if (!deleted.ok()) return deleted.status();
  return *deleted == 1 ? Status::Ok() : VersionMismatch(name, expected_version);
}

}  // namespace septa::store
