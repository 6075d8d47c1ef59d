// TrustTierService over core::TrustTierService.
#include <google/protobuf/empty.pb.h>

#include <algorithm>

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
  handlers.Add<v1::CreateTrustTierRequest>(
      [uc](const core::RequestContext& ctx, const v1::CreateTrustTierRequest& req) -> Result<v1::TrustTier> {
        SEPTA_ASSIGN_OR_RETURN(const core::TrustTier draft,
                               TrustTierFromProto(req.trust_tier(), /*require_gpu_sharing=*/true));
        SEPTA_ASSIGN_OR_RETURN(const core::TrustTier created, uc.tiers.Create(ctx, draft));
        return ToProto(created);
      });
  handlers.Add<v1::UpdateTrustTierRequest>(
      [uc](const core::RequestContext& ctx, const v1::UpdateTrustTierRequest& req) -> Result<v1::TrustTier> {
        const v1::TrustTier& in = req.trust_tier();
        std::vector<std::string> paths(req.update_mask().paths().begin(), req.update_mask().paths().end());
        paths = MaskPaths(*v1::TrustTier::descriptor(), paths.empty() ? TrustTierFieldsSet(in) : paths);
        const bool sharing = std::find(paths.begin(), paths.end(), "gpu_sharing") != paths.end();
        SEPTA_ASSIGN_OR_RETURN(const core::TrustTier desired, TrustTierFromProto(in, sharing));
        SEPTA_ASSIGN_OR_RETURN(const core::TrustTier updated, uc.tiers.Update(ctx, desired, paths, in.etag()));
        return ToProto(updated);
      });
  handlers.Add<v1::DeleteTrustTierRequest>(
      [uc](const core::RequestContext& ctx, const v1::DeleteTrustTierRequest& req) -> Result<google::protobuf::Empty> {
        SEPTA_RETURN_IF_ERROR(uc.tiers.Delete(ctx, req.name(), req.etag()));
        return google::protobuf::Empty();
      });
}

}  // namespace septa::apiv1
