// TenantMemberService over core::MemberService.
#include <google/protobuf/empty.pb.h>

#include "septa/v1/member.pb.h"
#include "services/apiv1/convert.h"
#include "services/apiv1/rpcs.h"

namespace septa::apiv1 {

namespace {

v1::TenantMember MemberToProto(const core::TenantMember& m) {
  v1::TenantMember out;
  out.set_tenant(m.tenant);
  out.set_member(core::MemberText(m));
  out.set_role(std::string(core::MemberRoleName(m.role)));
  *out.mutable_create_time() = ToTimestamp(m.create_time);
  *out.mutable_update_time() = ToTimestamp(m.update_time);
  out.set_etag(core::EtagOf(m.version));
  return out;
}

}  // namespace

void AddMemberRpcs(Handlers& handlers, const core::UseCases& uc) {
  handlers.Add<v1::ListTenantMembersRequest>(
      [uc](const core::RequestContext& ctx,
           const v1::ListTenantMembersRequest& req) -> Result<v1::ListTenantMembersResponse> {
        SEPTA_ASSIGN_OR_RETURN(const std::vector<core::TenantMember> members, uc.members.List(ctx, req.tenant()));
        v1::ListTenantMembersResponse out;
        for (const auto& m : members) *out.add_members() = MemberToProto(m);
        return out;
      });
  handlers.Add<v1::CreateTenantMemberRequest>(
      [uc](const core::RequestContext& ctx, const v1::CreateTenantMemberRequest& req) -> Result<v1::TenantMember> {
        SEPTA_ASSIGN_OR_RETURN(const core::TenantMember created,
                               uc.members.Create(ctx, req.tenant(), req.member(), req.role()));
        return MemberToProto(created);
      });
  handlers.Add<v1::UpdateTenantMemberRequest>(
      [uc](const core::RequestContext& ctx, const v1::UpdateTenantMemberRequest& req) -> Result<v1::TenantMember> {
        SEPTA_ASSIGN_OR_RETURN(const core::TenantMember updated,
                               uc.members.Update(ctx, req.tenant(), req.member(), req.role(), req.etag()));
        return MemberToProto(updated);
      });
  handlers.Add<v1::DeleteTenantMemberRequest>(
      [uc](const core::RequestContext& ctx,
           const v1::DeleteTenantMemberRequest& req) -> Result<google::protobuf::Empty> {
        SEPTA_RETURN_IF_ERROR(uc.members.Delete(ctx, req.tenant(), req.member(), req.etag()));
        return google::protobuf::Empty();
      });
}

}  // namespace septa::apiv1
