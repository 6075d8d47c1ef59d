#include "services/apiv1/auth_rule.h"

#include "septa/v1/http.pb.h"
#include "services/core/auth.h"

namespace septa::apiv1 {

namespace pb = google::protobuf;

Result<AuthRule> LoadAuthRule(const pb::MethodDescriptor& method) {
  const v1::AuthRule& declared = method.options().GetExtension(v1::auth);
  AuthRule rule;
  switch (declared.caller()) {
    case v1::CALLER_ANY: rule.caller = Caller::kAny; break;
    case v1::CALLER_WRITER: rule.caller = Caller::kWriter; break;
    case v1::CALLER_ADMIN: rule.caller = Caller::kAdmin; break;
    case v1::CALLER_ADMIN_WRITER: rule.caller = Caller::kAdminWriter; break;
    case v1::CALLER_ANONYMOUS: rule.caller = Caller::kAnonymous; break;
    default: return InvalidArgument("has no (septa.v1.auth) option saying who may call it");
  }
  if (rule.caller != Caller::kAny && rule.caller != Caller::kAnonymous && declared.action().empty()) {
    return InvalidArgument("(septa.v1.auth) restricts its callers but names no action for the refusal");
  }
  rule.action = declared.action();
  rule.apply_set_scope = declared.apply_set_scope();
  if (!declared.tenant_field().empty()) {
    auto field = ResolveFieldPath(*method.input_type(), declared.tenant_field(), {pb::FieldDescriptor::CPPTYPE_STRING});
    if (!field.ok()) return InvalidArgument("(septa.v1.auth) tenant_field: " + field.status().message());
    rule.tenant_field = *std::move(field);
  }
  if (rule.caller == Caller::kAnonymous && rule.tenant_field) {
    return InvalidArgument("(septa.v1.auth) an anonymous call can name no tenant to check");
  }
  return rule;
}

Status CheckCaller(const AuthRule& rule, const core::Principal& principal) {
  switch (rule.caller) {
    case Caller::kAny:
    case Caller::kAnonymous: return Status::Ok();
    case Caller::kWriter:
      if (rule.apply_set_scope && !principal.apply_sets.empty()) {
        core::Principal within = principal;  // the use case holds it to its sets
        within.apply_sets.clear();
        return core::RequireWriter(within, rule.action);
      }
      return core::RequireWriter(principal, rule.action);
    case Caller::kAdmin: return core::RequireAdmin(principal, rule.action);
    case Caller::kAdminWriter: return core::RequireAdminWriter(principal, rule.action);
  }
  return Internal("unknown caller rule");
}

Status CheckTenant(const AuthRule& rule, const core::Principal& principal, const pb::Message& request) {
  if (!rule.tenant_field) return Status::Ok();
  return core::RequireSeeTenant(principal, GetString(request, *rule.tenant_field));
}

std::string_view CallerName(Caller caller) {
  switch (caller) {
    case Caller::kAny: return "any";
    case Caller::kWriter: return "writer";
    case Caller::kAdmin: return "admin";
    case Caller::kAdminWriter: return "admin writer";
    case Caller::kAnonymous: return "anonymous";
  }
  return "";
}

}  // namespace septa::apiv1
