// Tenant member use cases (tenant_member.h), shared by REST and gRPC: who
// may see a tenant reads its members; its owners (tokens, people) and admins write
// them, each write audited as tenant_member.create, .update or .delete.
// A person who signs in acts with its memberships' roles (people.h).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/clock.h"
#include "services/core/auth.h"
#include "services/core/store.h"
#include "services/core/tenant_member.h"

namespace septa::core {

class MemberService {
 public:
  MemberService(Store& store, const Clock& clock) : store_(store), clock_(clock) {}

  // Any principal that may see the tenant, its viewers too; by (kind, name).
  Result<std::vector<TenantMember>> List(const RequestContext& ctx, const std::string& tenant);
  // Owners of the tenant (RequireOwner: not an editor or a viewer, not a suspended
  // tenant's token) and admins. `member`: "user:<name>" or "group:<name>";
  // `role`: owner, editor or viewer. kAlreadyExists for a member the tenant
  // has; kResourceExhausted once it has kMaxTenantMembers.
  Result<TenantMember> Create(const RequestContext& ctx, const std::string& tenant, std::string_view member,
                              std::string_view role);
  // A new role; `if_match`, when not empty, must be the member's etag. The
  // same role writes nothing (no new version, no audit record).
  Result<TenantMember> Update(const RequestContext& ctx, const std::string& tenant, std::string_view member,
                              std::string_view role, std::string_view if_match);
  Status Delete(const RequestContext& ctx, const std::string& tenant, std::string_view member,
                std::string_view if_match);

 private:
  Store& store_;
  const Clock& clock_;
};

}  // namespace septa::core
