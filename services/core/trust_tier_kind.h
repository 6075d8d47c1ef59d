// Trust tiers as a resource kind (resource_kind.h). Admins write them; a
// tier's tenants feel a change at once, so a change that would leave what
// they already hold behind is refused while any tenant has the tier:
// gpu_sharing (their capacity was placed under the old one) and
// runtime_class (their pods run under the old one). A lower credential cap
// shortens its tenants' live tokens as a tenant's move to the tier would.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "services/core/model.h"
#include "services/core/resource_kind.h"

namespace septa::core {

// "trust-tiers/gold": an audit record's resource.
std::string TrustTierResource(std::string_view name);

class TrustTierKind {
 public:
  using Object = TrustTier;
  static constexpr std::string_view kKind = "TrustTier";

  std::string ResourceName(const TrustTier& tier) const { return TrustTierResource(tier.name); }
  // display_name, description, gpu_sharing, co_tenancy, runtime_class,
  // credential_ttl_max, api_limits (or api_limits.<member>).
  Result<DeclaredFields> CheckDeclared(const DeclaredFields& declared) const;
  // Admin writers only; tenancy::ValidateTrustTier.
  Status Validate(const RequestContext& ctx, const TrustTier& tier) const;
  Result<std::optional<TrustTier>> Get(Tx& tx, const TrustTier& key) const;
  Result<TrustTier> Create(WriteScope& scope, const TrustTier& draft) const;
  Result<TrustTier> Update(WriteScope& scope, const TrustTier& live, const TrustTier& desired,
                           const DeclaredFields& declared) const;
  // FAILED_PRECONDITION naming tenants that still have it.
  Status Delete(WriteScope& scope, const TrustTier& live) const;
  // display_name, description, gpu_sharing, co_tenancy, runtime_class,
  // credential_ttl_max and each member of api_limits.
  std::vector<FieldChange> Diff(const TrustTier& live, const TrustTier& desired, const DeclaredFields& declared) const;
};

static_assert(ResourceKind<TrustTierKind>);

}  // namespace septa::core
