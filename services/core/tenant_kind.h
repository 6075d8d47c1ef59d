// Tenants as a resource kind (resource_kind.h): the writes TenantService's
// RPCs and a declared Tenant share.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "services/core/model.h"
#include "services/core/resource_kind.h"
#include "tenancy/quota.h"

namespace septa::core {

// "tenants/acme": an audit record's resource.
std::string TenantResource(std::string_view name);

// Fields to change; unset ones stay as they are.
struct TenantUpdate {
  std::optional<std::string> display_name;
  std::optional<std::map<std::string, std::string>> labels;
  std::optional<std::string> trust_tier;
  std::optional<TenantState> state;
  // The members of the quota to change, each to its value in `quota`
  // (absent there: unlimited).
  std::vector<std::optional<std::int64_t> tenancy::TenantQuota::*> quota_members;
  tenancy::TenantQuota quota;
};

// Who may make `update` (writers; admins for trust_tier, state and quota)
// and whether its values are well formed, each refusal naming its field.
Status CheckTenantUpdate(const RequestContext& ctx, const TenantUpdate& update);

class TenantKind {
 public:
  using Object = Tenant;
  static constexpr std::string_view kKind = "Tenant";

  std::string ResourceName(const Tenant& tenant) const { return TenantResource(tenant.name); }
  // display_name, labels (or labels.<key>), trust_tier, state, quota (or quota.<member>).
  Result<DeclaredFields> CheckDeclared(const DeclaredFields& declared) const;
  // Admin writers only; name, display_name, labels and quota well formed.
  Status Validate(const RequestContext& ctx, const Tenant& tenant) const;
  Result<std::optional<Tenant>> Get(Tx& tx, const Tenant& key) const;
  // Its tier must exist (INVALID_ARGUMENT trust_tier naming the choices).
  Result<Tenant> Create(WriteScope& scope, const Tenant& draft) const;
  Result<Tenant> Update(WriteScope& scope, const Tenant& live, const Tenant& desired,
                        const DeclaredFields& declared) const;
  // Revokes its API tokens; FAILED_PRECONDITION while it owns virtual clusters.
  Status Delete(WriteScope& scope, const Tenant& live) const;
  std::vector<FieldChange> Diff(const Tenant& live, const Tenant& desired, const DeclaredFields& declared) const;

  // `update` applied to `live`. Who may change what is the caller's to
  // check. A lower tier caps the tenant's token lifetimes; a new tier or
  // state makes the authenticator forget its tokens (scope.forget).
  Result<Tenant> Apply(WriteScope& scope, const Tenant& live, const TenantUpdate& update) const;
};

static_assert(ResourceKind<TenantKind>);

}  // namespace septa::core
