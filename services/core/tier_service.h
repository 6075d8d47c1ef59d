// Trust tier use cases: every principal reads the tiers; admins write them
// through TrustTierKind (trust_tier_kind.h), the same writes a declared
// TrustTier makes.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/clock.h"
#include "services/core/auth.h"
#include "services/core/resource_kind.h"
#include "services/core/store.h"
#include "services/core/trust_tier_kind.h"

namespace septa::core {

class TrustTierService {
 public:
  // `authenticator` forgets the tokens of a tier's tenants once a lower
  // credential cap has shortened them.
  TrustTierService(Store& store, const Clock& clock, Authenticator& authenticator)
      : store_(store), clock_(clock), authenticator_(authenticator) {}

  // Any authenticated principal may read the tiers.
  Result<std::vector<TrustTier>> List(const RequestContext& ctx);
  Result<TrustTier> Get(const RequestContext& ctx, const std::string& name);
  // Admin writers only. `paths`: the fields of `desired` to write
  // (TrustTierKind::CheckDeclared); `if_match`, when not empty, must be the
  // current etag. A write that changes nothing writes no new version.
  Result<TrustTier> Create(const RequestContext& ctx, const TrustTier& draft);
  Result<TrustTier> Update(const RequestContext& ctx, const TrustTier& desired, const std::vector<std::string>& paths,
                           std::string_view if_match);
  Status Delete(const RequestContext& ctx, const std::string& name, std::string_view if_match);

 private:
  Store& store_;
  const Clock& clock_;
  Authenticator& authenticator_;
  TrustTierKind kind_;
};

}  // namespace septa::core
