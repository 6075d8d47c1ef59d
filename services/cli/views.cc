#include "services/cli/views.h"

#include <google/protobuf/util/time_util.h>

#include <map>

namespace septa::cli {

namespace {

// "team=ml,tier=gold" in key order.
std::string FormatLabels(const google::protobuf::Map<std::string, std::string>& labels) {
  const std::map<std::string, std::string> sorted(labels.begin(), labels.end());
  std::string text;
  for (const auto& [key, value] : sorted) text += (text.empty() ? "" : ",") + key + "=" + value;
  return text.empty() ? "-" : text;
}

std::string OrDash(const std::string& text) { return text.empty() ? "-" : text; }

// "1h", "15m", "1h30m", as the API accepts lifetimes.
std::string FormatDuration(const google::protobuf::Duration& duration) {
  std::int64_t seconds = duration.seconds();
  if (seconds == 0) return "0s";
  std::string text;
  for (const auto& [unit, size] : {std::pair{"h", 3600}, std::pair{"m", 60}, std::pair{"s", 1}}) {
    if (seconds >= size) text += std::to_string(seconds / size) + unit;
    seconds %= size;
  }
  return text;
}

}  // namespace

std::string FormatTime(const google::protobuf::Timestamp& time, bool is_set) {
  if (!is_set) return "-";
  google::protobuf::Timestamp seconds;
  seconds.set_seconds(time.seconds());
  return google::protobuf::util::TimeUtil::ToString(seconds);
}

Table TenantTable(const google::protobuf::RepeatedPtrField<v1::Tenant>& tenants) {
  Table table{{"NAME", "DISPLAY NAME", "TIER", "STATE", "LABELS", "CREATED", "ETAG"}, {}};
  for (const auto& t : tenants) {
    table.rows.push_back({t.name(), OrDash(t.display_name()), t.trust_tier(), v1::Tenant::State_Name(t.state()),
                          FormatLabels(t.labels()), FormatTime(t.create_time(), t.has_create_time()), t.etag()});
  }
  return table;
}

Table TrustTierTable(const google::protobuf::RepeatedPtrField<v1::TrustTier>& tiers) {
  Table table{{"NAME", "DISPLAY NAME", "GPU SHARING", "CO-TENANCY", "RUNTIME CLASS", "CREDENTIAL TTL MAX"}, {}};
  for (const auto& t : tiers) {
    table.rows.push_back({t.name(), OrDash(t.display_name()), v1::TrustTier::GpuSharing_Name(t.gpu_sharing()),
                          OrDash(t.co_tenancy()), OrDash(t.runtime_class()), FormatDuration(t.credential_ttl_max())});
  }
  return table;
}

Table TokenTable(const google::protobuf::RepeatedPtrField<v1::ApiToken>& tokens) {
  Table table{{"ID", "PRINCIPAL", "ROLE", "DESCRIPTION", "CREATED", "EXPIRES", "REVOKED"}, {}};
  for (const auto& t : tokens) {
    table.rows.push_back(
        {t.id(), t.principal(), t.role(), OrDash(t.description()), FormatTime(t.create_time(), t.has_create_time()),
         FormatTime(t.expire_time(), t.has_expire_time()), FormatTime(t.revoke_time(), t.has_revoke_time())});
  }
  return table;
}

}  // namespace septa::cli
