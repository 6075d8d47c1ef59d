// TenantService over core::TenantService.
#include <google/protobuf/empty.pb.h>

#include "services/apiv1/convert.h"
#include "services/apiv1/rpcs.h"

namespace septa::apiv1 {

namespace {

// Without an update mask, the fields the client set (proto3 has no presence
// for scalars, so a non-empty value counts as set). Over REST the mask is
// the fields the body sent, which can clear one.
std::vector<std::string> TenantFieldsSet(const v1::Tenant& t) {
  std::vector<std::string> paths;
  if (!t.display_name().empty()) paths.push_back("display_name");
  if (!t.labels().empty()) paths.push_back("labels");
  if (!t.trust_tier().empty()) paths.push_back("trust_tier");
  if (t.state() != v1::Tenant::STATE_UNSPECIFIED) paths.push_back("state");
  if (t.has_quota()) paths.push_back("quota");
  return paths;
}

}  // namespace

void AddTenantRpcs(Handlers& handlers, const core::UseCases& uc) {
  handlers.Add<v1::CreateTenantRequest>(
      [uc](const core::RequestContext& ctx, const v1::CreateTenantRequest& req) -> Result<v1::Tenant> {
        SEPTA_ASSIGN_OR_RETURN(const core::Tenant draft, TenantDraftFromProto(req.tenant()));
        SEPTA_ASSIGN_OR_RETURN(const core::Tenant created, uc.tenants.Create(ctx, draft, req.idempotency_key()));
        return ToProto(created);
      });
  handlers.Add<v1::GetTenantRequest>(
      [uc](const core::RequestContext& ctx, const v1::GetTenantRequest& req) -> Result<v1::Tenant> {
        SEPTA_ASSIGN_OR_RETURN(const core::TenantView view, uc.tenants.Get(ctx, req.name()));
        return ToProto(view.tenant, view.quota_usage);
      });
  handlers.Add<v1::GetTenantQuotaRequest>(
      [uc](const core::RequestContext& ctx, const v1::GetTenantQuotaRequest& req) -> Result<v1::TenantQuotaStatus> {
        SEPTA_ASSIGN_OR_RETURN(const core::TenantQuotaView view, uc.tenants.GetQuota(ctx, req.tenant()));
        return ToProto(view);
      });
  handlers.Add<v1::ListTenantsRequest>(
      [uc](const core::RequestContext& ctx, const v1::ListTenantsRequest& req) -> Result<v1::ListTenantsResponse> {
        SEPTA_ASSIGN_OR_RETURN(const core::TenantPage page,
                               uc.tenants.List(ctx, {req.page_size(), req.page_token(), req.filter()}));
        v1::ListTenantsResponse out;
        for (const auto& t : page.tenants) *out.add_tenants() = ToProto(t);
        out.set_next_page_token(page.next_page_token);
        return out;
      });
  handlers.Add<v1::UpdateTenantRequest>(
      [uc](const core::RequestContext& ctx, const v1::UpdateTenantRequest& req) -> Result<v1::Tenant> {
        std::vector<std::string> paths(req.update_mask().paths().begin(), req.update_mask().paths().end());
        if (paths.empty()) paths = TenantFieldsSet(req.tenant());
        SEPTA_ASSIGN_OR_RETURN(const core::TenantUpdate update, TenantUpdateFromProto(req.tenant(), paths));
        SEPTA_ASSIGN_OR_RETURN(const core::Tenant updated,
                               uc.tenants.Update(ctx, req.tenant().name(), update, req.tenant().etag()));
        return ToProto(updated);
      });
  handlers.Add<v1::DeleteTenantRequest>(
      [uc](const core::RequestContext& ctx, const v1::DeleteTenantRequest& req) -> Result<google::protobuf::Empty> {
        SEPTA_RETURN_IF_ERROR(uc.tenants.Delete(ctx, req.name(), req.etag()));
        return google::protobuf::Empty();
      });
}

}  // namespace septa::apiv1
