// The audit record of one mutation, written by the use case in the same
// transaction as the change.
#pragma once

#include <string>

#include "services/core/auth.h"
#include "services/core/model.h"

namespace septa::core {

// Who did it: the principal, and the person acting as it when one signed
// in ("tenant:acme user:alice@acme.test").
inline std::string AuditPrincipal(const Principal& principal) {
  return principal.person.empty() ? principal.ToString() : principal.ToString() + " user:" + principal.person;
}

inline AuditRecord AuditOf(const RequestContext& ctx, TimePoint now, std::string action, std::string resource,
                           std::string old_etag, std::string new_etag) {
  return AuditRecord{0,
                     now,
                     AuditPrincipal(ctx.principal),
                     std::move(action),
                     std::move(resource),
                     std::move(old_etag),
                     std::move(new_etag),
                     ctx.request_id,
                     std::string(SurfaceName(ctx.surface))};
}

}  // namespace septa::core
