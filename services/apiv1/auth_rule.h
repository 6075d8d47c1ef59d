// Who may call an RPC: the `septa.v1.auth` method option
// (api/proto/septa/v1/http.proto), checked once for both transports before
// the use case runs. The use cases keep their own checks (they are called
// from elsewhere too); these refuse early, before a body is read, with the
// same rules and words (services/core/auth.h).
#pragma once

#include <optional>
#include <string>

#include <google/protobuf/descriptor.h>
#include <google/protobuf/message.h>

#include "common/status.h"
#include "services/apiv1/field_path.h"
#include "services/core/model.h"

namespace septa::apiv1 {

// kAnonymous: no credential is asked for; the request carries its own,
// which the use case verifies (a token exchange's subject token).
enum class Caller { kAny, kWriter, kAdmin, kAdminWriter, kAnonymous };

struct AuthRule {
  Caller caller = Caller::kAny;
  std::optional<FieldPath> tenant_field;  // the request field naming the tenant acted on
  std::string action;                     // "create virtual clusters"
  // A token scoped to apply sets may make the call (the use case checks
  // the set): its scope is not held against it here.
  bool apply_set_scope = false;
};

// The RPC's rule; fails when it has none, names no string field, or a
// restricted caller has no action to name in a refusal.
Result<AuthRule> LoadAuthRule(const google::protobuf::MethodDescriptor& method);

// kPermissionDenied unless `principal` is a caller the rule admits.
Status CheckCaller(const AuthRule& rule, const core::Principal& principal);
// kNotFound when the request names a tenant `principal` may not see.
Status CheckTenant(const AuthRule& rule, const core::Principal& principal, const google::protobuf::Message& request);

// "any", "writer", "admin", "admin writer", "anonymous": how the documentation names a caller.
std::string_view CallerName(Caller caller);

}  // namespace septa::apiv1
