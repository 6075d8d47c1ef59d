// Writes outside an apply set to the fields it owns (GitOps' drift
// policies, docs/gitops.md). Every update and delete of a kind that can be
// declared passes here, in its transaction, once it knows which fields it
// changes and before it writes them:
//  - an apply of a set writes: ownership is settled by Apply's gate;
//  - the object belongs to no set, or no field the set owns changes:
//    nothing to do (fields no set owns stay editable everywhere);
//  - the set's policy is lock: FAILED_PRECONDITION naming the set, its
//    source and the field, unless an admin breaks glass with a reason;
//  - otherwise (report, revert, or glass broken) the write goes ahead,
//    recorded as applyset.drift (applyset.break_glass) on the object with
//    who, where and which fields, and the set's controller is told
//    (NoteDrift): it counts the drift and, under revert, undoes it.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "services/core/resource_kind.h"

namespace septa::core {

inline constexpr char kDriftAction[] = "applyset.drift";
inline constexpr char kBreakGlassAction[] = "applyset.break_glass";

// `action` is the write's own audit action ("tenant.update"); `changed`
// the API paths it changes; empty: the whole object (a delete).
Status GuardSetMember(WriteScope& scope, std::string_view kind, const std::string& resource, std::string_view action,
                      const std::vector<std::string>& changed);

// The paths of `changes`.
std::vector<std::string> PathsOf(const std::vector<FieldChange>& changes);

}  // namespace septa::core
