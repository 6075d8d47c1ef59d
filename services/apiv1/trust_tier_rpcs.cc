// TrustTierService over core::TrustTierService.
#include "services/apiv1/convert.h"
#include "services/apiv1/rpcs.h"

namespace septa::apiv1 {

void AddTrustTierRpcs(Handlers& handlers, const core::UseCases& uc) {
  handlers.Add<v1::ListTrustTiersRequest>(
      [uc](const core::RequestContext& ctx, const v1::ListTrustTiersRequest&) -> Result<v1::ListTrustTiersResponse> {
        SEPTA_ASSIGN_OR_RETURN(const std::vector<core::TrustTier> tiers, uc.tiers.List(ctx));
        v1::ListTrustTiersResponse out;
        for (const auto& t : tiers) *out.add_trust_tiers() = ToProto(t);
        return out;
      });
  handlers.Add<v1::GetTrustTierRequest>(
      [uc](const core::RequestContext& ctx, const v1::GetTrustTierRequest& req) -> Result<v1::TrustTier> {
        SEPTA_ASSIGN_OR_RETURN(const core::TrustTier tier, uc.tiers.Get(ctx, req.name()));
        return ToProto(tier);
      });
}

}  // namespace septa::apiv1
