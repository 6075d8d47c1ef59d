#include "services/core/member_service.h"

#include "services/core/audit.h"
#include "services/core/validation.h"

namespace septa::core {

namespace {

std::string MemberNoun(const std::string& tenant, const MemberId& id) {
  return "member \"" + MemberText(id.kind, id.name) + "\" of tenant \"" + tenant + "\"";
}

// Who may read the tenant's members: a name no tenant can have is not
// found without asking the store, nor is another tenant's.
Status RequireMemberTenant(const Principal& principal, const std::string& tenant) {
  if (!CanNameTenantOrTier(tenant)) return NotFound("tenant \"" + EscapeControlCharacters(tenant) + "\" not found");
  return RequireSeeTenant(principal, tenant);
}

// The tenant's existence, in the words users see.
Status RequireMemberTenantRow(Tx& tx, const std::string& tenant) {
  auto found = tx.Tenants().Get(tenant);
  if (IsNotFound(found)) return NotFound("tenant \"" + tenant + "\" not found");
  return ToStatus(found);
}

Result<TenantMember> ReadMember(Tx& tx, const std::string& tenant, const MemberId& id) {
  SEPTA_RETURN_IF_ERROR(RequireMemberTenantRow(tx, tenant));
  auto found = tx.TenantMembers().Get(tenant, id.kind, id.name);
  if (IsNotFound(found)) return NotFound(MemberNoun(tenant, id) + " not found");
  return found;
}

}  // namespace

Result<std::vector<TenantMember>> MemberService::List(const RequestContext& ctx, const std::string& tenant) {
  SEPTA_RETURN_IF_ERROR(RequireMemberTenant(ctx.principal, tenant));
  return TransactFor(store_, TxMode::kReadOnly, [&](Tx& tx) -> Result<std::vector<TenantMember>> {
    SEPTA_RETURN_IF_ERROR(RequireMemberTenantRow(tx, tenant));
    return tx.TenantMembers().List(tenant);
  });
}

Result<TenantMember> MemberService::Create(const RequestContext& ctx, const std::string& tenant,
                                           std::string_view member, std::string_view role) {
  SEPTA_RETURN_IF_ERROR(RequireMemberTenant(ctx.principal, tenant));
  SEPTA_RETURN_IF_ERROR(RequireOwner(ctx.principal, "add tenant members"));
  SEPTA_ASSIGN_OR_RETURN(const MemberId id, ParseMember("member", member));
  SEPTA_ASSIGN_OR_RETURN(const MemberRole parsed_role, ParseMemberRole("role", role));
  return TransactFor(store_, TxMode::kReadWrite, [&](Tx& tx) -> Result<TenantMember> {
    SEPTA_RETURN_IF_ERROR(RequireMemberTenantRow(tx, tenant));
    // Reading every member makes two concurrent creates of the last place
    // conflict (serializable), so that one of them is refused on its retry.
    SEPTA_ASSIGN_OR_RETURN(const std::vector<TenantMember> members, tx.TenantMembers().List(tenant));
    for (const TenantMember& m : members) {
      if (m.kind == id.kind && m.name == id.name) {
        return FieldError(Code::kAlreadyExists, "member", MemberNoun(tenant, id) + " already exists");
      }
    }
    if (static_cast<int>(members.size()) >= kMaxTenantMembers) {
      return ResourceExhausted("tenant \"" + tenant + "\" has " + std::to_string(members.size()) +
                               " members, the limit of " + std::to_string(kMaxTenantMembers) +
                               " members per tenant; remove one first, or name a group instead of its users");
    }
    const TimePoint now = Now(clock_);
    const TenantMember created{.tenant = tenant,
                               .kind = id.kind,
                               .name = id.name,
                               .role = parsed_role,
                               .create_time = now,
                               .update_time = now,
                               .version = 1};
    SEPTA_RETURN_IF_ERROR(tx.TenantMembers().Insert(created));
    SEPTA_RETURN_IF_ERROR(tx.Audit().Append(
        AuditOf(ctx, now, "tenant_member.create", MemberResource(tenant, id.kind, id.name), "", EtagOf(1))));
    return created;
  });
}

Result<TenantMember> MemberService::Update(const RequestContext& ctx, const std::string& tenant,
                                           std::string_view member, std::string_view role, std::string_view if_match) {
  SEPTA_RETURN_IF_ERROR(RequireMemberTenant(ctx.principal, tenant));
  SEPTA_RETURN_IF_ERROR(RequireOwner(ctx.principal, "change tenant members"));
  SEPTA_ASSIGN_OR_RETURN(const MemberId id, ParseMember("member", member));
  SEPTA_ASSIGN_OR_RETURN(const MemberRole parsed_role, ParseMemberRole("role", role));
  return TransactFor(store_, TxMode::kReadWrite, [&](Tx& tx) -> Result<TenantMember> {
    SEPTA_ASSIGN_OR_RETURN(const TenantMember current, ReadMember(tx, tenant, id));
    SEPTA_RETURN_IF_ERROR(CheckEtag(if_match, current.version, MemberNoun(tenant, id)));
    if (current.role == parsed_role) return current;
    TenantMember next = current;
    next.role = parsed_role;
    next.update_time = Now(clock_);
    next.version = current.version + 1;
    SEPTA_RETURN_IF_ERROR(tx.TenantMembers().Update(next, current.version));
    SEPTA_RETURN_IF_ERROR(tx.Audit().Append(AuditOf(ctx, next.update_time, "tenant_member.update",
                                                    MemberResource(tenant, id.kind, id.name), EtagOf(current.version),
                                                    EtagOf(next.version))));
    return next;
  });
}

Status MemberService::Delete(const RequestContext& ctx, const std::string& tenant, std::string_view member,
                             std::string_view if_match) {
  SEPTA_RETURN_IF_ERROR(RequireMemberTenant(ctx.principal, tenant));
  SEPTA_RETURN_IF_ERROR(RequireOwner(ctx.principal, "remove tenant members"));
  SEPTA_ASSIGN_OR_RETURN(const MemberId id, ParseMember("member", member));
  return store_.Transact(TxMode::kReadWrite, [&](Tx& tx) -> Status {
    SEPTA_ASSIGN_OR_RETURN(const TenantMember current, ReadMember(tx, tenant, id));
    SEPTA_RETURN_IF_ERROR(CheckEtag(if_match, current.version, MemberNoun(tenant, id)));
    SEPTA_RETURN_IF_ERROR(tx.TenantMembers().Delete(tenant, id.kind, id.name, current.version));
    return tx.Audit().Append(AuditOf(ctx, Now(clock_), "tenant_member.delete", MemberResource(tenant, id.kind, id.name),
                                     EtagOf(current.version), ""));
  });
}

}  // namespace septa::core
