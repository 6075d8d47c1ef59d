// CallerService over core::DescribeCaller.
#include "septa/v1/caller.pb.h"
#include "services/apiv1/convert.h"
#include "services/apiv1/rpcs.h"
#include "services/core/people.h"

namespace septa::apiv1 {

void AddCallerRpcs(Handlers& handlers, const core::UseCases& uc) {
  handlers.Add<v1::GetCallerRequest>(
      [uc](const core::RequestContext& ctx, const v1::GetCallerRequest&) -> Result<v1::CallerIdentity> {
        SEPTA_ASSIGN_OR_RETURN(const core::CallerDescription caller, core::DescribeCaller(ctx, uc.people));
        v1::CallerIdentity out;
        const core::Principal& p = caller.principal;
        out.set_principal(p.admin || !p.tenant.empty() ? p.ToString() : "");
        out.set_role(std::string(core::RoleName(p.role)));
        out.set_token_id(p.token_id);
        if (caller.person != nullptr) {
          out.set_user(caller.person->user);
          out.set_issuer(caller.person->issuer);
          for (const std::string& group : caller.person->groups) out.add_groups(group);
          *out.mutable_expire_time() = ToTimestamp(caller.person->expire_time);
        }
        out.set_admin_by_group(caller.admin_by_group);
        for (const core::Membership& m : caller.memberships) {
          v1::CallerMembership& added = *out.add_memberships();
          added.set_tenant(m.tenant);
          added.set_role(std::string(core::MemberRoleName(m.role)));
          for (const std::string& via : m.via) added.add_via(via);
        }
        return out;
      });
}

}  // namespace septa::apiv1
