#include "services/core/apply_set_guard.h"

#include "common/text.h"
#include "services/core/apply_service.h"
#include "services/core/audit.h"

namespace septa::core {

std::vector<std::string> PathsOf(const std::vector<FieldChange>& changes) {
  std::vector<std::string> paths;
  paths.reserve(changes.size());
  for (const FieldChange& c : changes) paths.push_back(c.path);
  return paths;
}

Status GuardSetMember(WriteScope& scope, std::string_view kind, const std::string& resource, std::string_view action,
                      const std::vector<std::string>& changed) {
  if (scope.applying_set) return Status::Ok();
  SEPTA_ASSIGN_OR_RETURN(const std::optional<ApplySetMember> member,
                         scope.tx.ApplySets().MemberOf(std::string(kind), resource));
  if (!member) return Status::Ok();
  const DeclaredFields owned(member->declared);
  std::vector<std::string> touched;  // the owned fields the write changes
  if (changed.empty()) {
    touched.push_back("(the whole object: deleted)");
  } else {
    for (const std::string& path : changed) {
      if (owned.Covers(path)) touched.push_back(path);
    }
    if (touched.empty()) return Status::Ok();
  }
  SEPTA_ASSIGN_OR_RETURN(const std::optional<ApplySet> set,
                         scope.tx.ApplySets().Get(member->set_tenant, member->set_name));
  if (!set) return Status::Ok();  // the member's row goes with its set (ON DELETE CASCADE)
  const std::string set_resource = ApplySetResource(member->set_tenant, member->set_name);
  std::string detail = std::string(action) + " changed " + Join(touched, ", ");
  std::string_view record = kDriftAction;
  if (set->on_drift == DriftPolicy::kLock) {
    const std::string field = changed.empty() ? "" : touched.front();
    if (scope.ctx.break_glass.empty()) {
      return Status(Code::kFailedPrecondition,
                    resource + ": " + (changed.empty() ? "the object" : touched.front()) + " is owned by apply set " +
                        set_resource + (set->source.empty() ? "" : " (from " + set->source + ")") +
                        ", which locks what it declares: change it in Git, or, as an admin, break glass with a "
                        "reason",
                    {{field, "owned by apply set " + set_resource}});
    }
    if (!scope.ctx.principal.admin) {
      return PermissionDenied("only an admin may break the glass of apply set " + set_resource);
    }
    detail += "; reason: " + scope.ctx.break_glass;
    record = kBreakGlassAction;
  }
  AuditRecord audit = AuditOf(scope.ctx, scope.now, std::string(record), resource, "", "");
  audit.detail = std::move(detail);
  SEPTA_RETURN_IF_ERROR(scope.tx.Audit().Append(audit));
  return scope.tx.ApplySets().NoteDrift(member->set_tenant, member->set_name, SurfaceName(scope.ctx.surface));
}

}  // namespace septa::core
