// VirtualClusterService's credential RPCs over core::CredentialService.
#include "services/apiv1/convert.h"
#include "services/apiv1/rpcs.h"

namespace septa::apiv1 {

void AddCredentialRpcs(Handlers& handlers, const core::UseCases& uc) {
  handlers.Add<v1::IssueKubeconfigRequest>([uc](const core::RequestContext& ctx, const v1::IssueKubeconfigRequest& req)
                                               -> Result<v1::IssueKubeconfigResponse> {
    SEPTA_ASSIGN_OR_RETURN(const core::IssuedKubeconfig issued,
                           uc.credentials.IssueKubeconfig(ctx, req.tenant(), req.vcluster(), {req.ttl(), req.role()}));
    return ToProto(issued);
  });
  handlers.Add<v1::ListCredentialsRequest>(
      [uc](const core::RequestContext& ctx,
           const v1::ListCredentialsRequest& req) -> Result<v1::ListCredentialsResponse> {
        SEPTA_ASSIGN_OR_RETURN(const core::CredentialPage page,
                               uc.credentials.List(ctx, req.tenant(), req.vcluster(),
                                                   {req.page_size(), req.page_token(), req.expiring_within_seconds()}));
        return ToProto(page);
      });
  handlers.Add<v1::RevokeCredentialRequest>(
      [uc](const core::RequestContext& ctx, const v1::RevokeCredentialRequest& req) -> Result<v1::Credential> {
        SEPTA_ASSIGN_OR_RETURN(const core::VclusterCredential revoked,
                               uc.credentials.Revoke(ctx, req.tenant(), req.vcluster(), req.serial()));
        return ToProto(revoked);
      });
}

}  // namespace septa::apiv1
