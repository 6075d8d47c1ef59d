#include "services/core/resource_kinds.h"

#include <optional>
#include <type_traits>

namespace septa::core {
namespace {

// Plan for any kind: validated, then compared with `live` (what `tx`
// holds, read into it). A create lists the declared fields it sets
// (against an object holding only the identity).
template <ResourceKind K>
Result<PlannedChange> PlanWith(const K& kind, const RequestContext& ctx, Tx& tx, const typename K::Object& desired,
                               const DeclaredFields& declared, std::optional<typename K::Object>& live) {
  SEPTA_RETURN_IF_ERROR(kind.Validate(ctx, desired));
  SEPTA_RETURN_IF_ERROR(kind.CheckDeclared(declared));
  SEPTA_ASSIGN_OR_RETURN(live, kind.Get(tx, desired));
  PlannedChange plan{K::kKind, kind.ResourceName(desired), PlannedAction::kUnchanged, {}};
  if (!live) {
    plan.action = PlannedAction::kCreate;
    plan.fields = kind.Diff(typename K::Object{}, desired, declared);
    return plan;
  }
  plan.fields = kind.Diff(*live, desired, declared);
  plan.action = plan.fields.empty() ? PlannedAction::kUnchanged : PlannedAction::kUpdate;
  return plan;
}

}  // namespace

Result<PlannedChange> ResourceKinds::Plan(const RequestContext& ctx, Tx& tx, const Declaration& declaration) const {
  return Dispatch(declaration.object, [&](const auto& kind, const auto& desired) {
    std::optional<std::decay_t<decltype(desired)>> live;
    return PlanWith(kind, ctx, tx, desired, declaration.declared, live);
  });
}

Result<PlannedChange> ResourceKinds::Apply(WriteScope& scope, const Declaration& declaration) const {
  return Dispatch(declaration.object, [&](const auto& kind, const auto& desired) -> Result<PlannedChange> {
    std::optional<std::decay_t<decltype(desired)>> live;
    SEPTA_ASSIGN_OR_RETURN(PlannedChange plan,
                           PlanWith(kind, scope.ctx, scope.tx, desired, declaration.declared, live));
    switch (plan.action) {
      case PlannedAction::kCreate: SEPTA_RETURN_IF_ERROR(kind.Create(scope, desired)); break;
      case PlannedAction::kUpdate:
        SEPTA_RETURN_IF_ERROR(kind.Update(scope, *live, desired, declaration.declared));
        break;
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

}  // namespace septa::core
