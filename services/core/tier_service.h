// Trust tier use cases (read-only for now: tiers are seeded by migration).
#pragma once

#include <string>
#include <vector>

#include "services/core/auth.h"
#include "services/core/store.h"

namespace septa::core {

class TrustTierService {
 public:
  explicit TrustTierService(Store& store) : store_(store) {}

  // Any authenticated principal may read the tiers.
  Result<std::vector<TrustTier>> List(const RequestContext& ctx);
  Result<TrustTier> Get(const RequestContext& ctx, const std::string& name);

 private:
  Store& store_;
};

}  // namespace septa::core
