#include "services/store/pg_repositories.h"
#include "services/store/pg_values.h"

namespace septa::store {
namespace {

using core::TrustTier;

gpu::Tier SharingOf(const std::string& text) {
  if (text == "mig") return gpu::Tier::kIsolated;
  if (text == "whole-gpu") return gpu::Tier::kDedicated;
  if (text == "whole-node") return gpu::Tier::kExclusive;
  return gpu::Tier::kShared;  // the CHECK constraint admits nothing else
}

constexpr char kTierColumns[] =
    "name, display_name, description, gpu_sharing, co_tenancy, runtime_class, credential_ttl_max_seconds, "
    "septa_micros(create_time), septa_micros(update_time), api_limits_objects, api_limits_object_bytes, "
    "api_limits_watches, api_limits_requests_in_flight";
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
          {r[9].as<std::int64_t>(), r[10].as<std::int64_t>(), r[11].as<std::int64_t>(), r[12].as<std::int64_t>()}};
}

}  // namespace

void PgTrustTiers::Prepare(pqxx::connection& c) {
  const std::string tier = kTierColumns;
  c.prepare("tier_list", "SELECT " + tier + " FROM trust_tiers ORDER BY name");
  c.prepare("tier_get", "SELECT " + tier + " FROM trust_tiers WHERE name = $1");
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

}  // namespace septa::store
