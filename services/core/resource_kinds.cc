#include "services/core/resource_kinds.h"

#include <optional>
#include <type_traits>

#include "common/text.h"

namespace septa::core {
namespace {

// Plan for any kind: validated, then compared with `live` (what `tx`
// holds, read into it). A create lists the declared fields it sets
// (against an object holding only the identity). `declared` becomes the
// paths as the kind writes them.
template <ResourceKind K>
Result<PlannedChange> PlanWith(const K& kind, const RequestContext& ctx, Tx& tx, const typename K::Object& desired,
                               DeclaredFields& declared, std::optional<typename K::Object>& live) {
  SEPTA_RETURN_IF_ERROR(kind.Validate(ctx, desired));
  SEPTA_ASSIGN_OR_RETURN(declared, kind.CheckDeclared(declared));
  SEPTA_ASSIGN_OR_RETURN(live, kind.Get(tx, desired));
  PlannedChange plan{K::kKind, kind.ResourceName(desired), PlannedAction::kUnchanged, {}, declared};
  if (!live) {
    plan.action = PlannedAction::kCreate;
    plan.fields = kind.Diff(typename K::Object{}, desired, declared);
    for (FieldChange& field : plan.fields) field.live.clear();  // nothing lives yet, not a default
    return plan;
  }
  plan.fields = kind.Diff(*live, desired, declared);
  plan.action = plan.fields.empty() ? PlannedAction::kUnchanged : PlannedAction::kUpdate;
  return plan;
}

}  // namespace

Result<PlannedChange> ResourceKinds::Apply(WriteScope& scope, const Declaration& declaration, const Gate& gate) const {
  return Dispatch(declaration.object, [&](const auto& kind, const auto& desired) -> Result<PlannedChange> {
    std::optional<std::decay_t<decltype(desired)>> live;
    DeclaredFields declared = declaration.declared;
    SEPTA_ASSIGN_OR_RETURN(PlannedChange plan, PlanWith(kind, scope.ctx, scope.tx, desired, declared, live));
    if (gate) SEPTA_RETURN_IF_ERROR(gate(plan));
    switch (plan.action) {
      case PlannedAction::kCreate: SEPTA_RETURN_IF_ERROR(kind.Create(scope, desired)); break;
      case PlannedAction::kUpdate: SEPTA_RETURN_IF_ERROR(kind.Update(scope, *live, desired, declared)); break;
      case PlannedAction::kUnchanged: break;
    }
    return plan;
  });
}

Result<bool> ResourceKinds::Delete(WriteScope& scope, const DeclaredObject& object) const {
  return Dispatch(object, [&](const auto& kind, const auto& key) -> Result<bool> {
    SEPTA_RETURN_IF_ERROR(kind.Validate(scope.ctx, key));
    SEPTA_ASSIGN_OR_RETURN(const auto live, kind.Get(scope.tx, key));
    if (!live) return false;
    SEPTA_RETURN_IF_ERROR(kind.Delete(scope, *live));
    return true;
  });
}

std::string_view ResourceKinds::KindOf(const DeclaredObject& object) const {
  return Dispatch(
      object, [](const auto& kind, const auto&) -> std::string_view { return std::decay_t<decltype(kind)>::kKind; });
}

std::string ResourceKinds::ResourceNameOf(const DeclaredObject& object) const {
  return Dispatch(object, [](const auto& kind, const auto& o) { return kind.ResourceName(o); });
}

Result<DeclaredObject> ResourceKinds::IdentityOf(std::string_view kind, std::string_view resource) const {
  const std::vector<std::string> parts = Split(resource, '/');
  if (kind == TrustTierKind::kKind && parts.size() == 2 && parts[0] == "trust-tiers") {
    TrustTier tier;
    tier.name = parts[1];
    return DeclaredObject(std::move(tier));
  }
  if (kind == TenantKind::kKind && parts.size() == 2 && parts[0] == "tenants") {
    Tenant tenant;
    tenant.name = parts[1];
    return DeclaredObject(std::move(tenant));
  }
  if (kind == VirtualClusterKind::kKind && parts.size() == 4 && parts[0] == "tenants" && parts[2] == "vclusters") {
    tenancy::VirtualCluster vc;
    vc.tenant = parts[1];
    vc.name = parts[3];
    return DeclaredObject(std::move(vc));
  }
  if (kind == TokenDeclarationKind::kKind && parts.size() == 2 && parts[0] == "apitokens") {
    TokenDeclaration token;
    token.name = parts[1];
    return DeclaredObject(std::move(token));
  }
  return InvalidArgument("\"" + EscapeControlCharacters(std::string(resource)) + "\" names no " +
                         EscapeControlCharacters(std::string(kind)));
}

}  // namespace septa::core
