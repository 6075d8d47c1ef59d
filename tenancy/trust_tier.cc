#include "tenancy/trust_tier.h"

#include <string>

#include "common/text.h"
#include "tenancy/names.h"

namespace septa::tenancy {
namespace {

// Tier texts shown to tenants and admins: one printable line each.
constexpr std::size_t kMaxTierTextBytes = 1024;

}  // namespace

Status ValidateTrustTier(const TrustTier& tier) {
  SEPTA_RETURN_IF_ERROR(ValidateTrustTierName("name", tier.name));
  SEPTA_RETURN_IF_ERROR(ValidateDisplayName("display_name", tier.display_name));
  SEPTA_RETURN_IF_ERROR(ValidateText("description", tier.description, kMaxTierTextBytes));
  SEPTA_RETURN_IF_ERROR(ValidateText("co_tenancy", tier.co_tenancy, kMaxTierTextBytes));
  if (tier.co_tenancy.empty()) return InvalidField("co_tenancy", "is required: say who may share hardware");
  if (tier.runtime_class.empty()) return InvalidField("runtime_class", "is required");
  if (!IsDns1123Subdomain(tier.runtime_class)) {
    return InvalidField("runtime_class", "must be a RuntimeClass name: a DNS-1123 subdomain of at most 253 characters");
  }
  if (tier.credential_ttl_max_seconds < 1 || tier.credential_ttl_max_seconds > kMaxCredentialTtlSeconds) {
    return InvalidField("credential_ttl_max", "must be between 1s and " + std::to_string(kMaxCredentialTtlSeconds) +
                                                  "s (366 days), got " +
                                                  std::to_string(tier.credential_ttl_max_seconds) + "s");
  }
  for (const auto& [member, value] : {std::pair{"objects", tier.api_limits.objects},
                                      {"object_bytes", tier.api_limits.object_bytes},
                                      {"watches", tier.api_limits.watches},
                                      {"requests_in_flight", tier.api_limits.requests_in_flight}}) {
    if (!value) return InvalidField(std::string("api_limits.") + member, "is required: a tier sets every default");
  }
  return ValidateApiLimits("api_limits", tier.api_limits);
}

}  // namespace septa::tenancy
