// An ApplyPlan for people, as Terraform shows a plan: a line per object
// with its action's symbol (+ create, ~ update, - delete, = unchanged,
// ! conflict or refused), under it the fields that differ and why an
// object is refused, and a count of each action at the end. Programs read
// -o json, the ApplyPlan itself.
#pragma once

#include <string>

#include "septa/v1/declarative.pb.h"
#include "services/cli/output.h"

namespace septa::cli {

struct PlanViewOptions {
  bool show_unchanged = false;  // list UNCHANGED objects too
  bool applying = false;        // the plan an Apply answered: "Applied: ..." once committed
};

std::string RenderPlan(const v1::ApplyPlan& plan, const PlanViewOptions& options);

// The same plan as a table (`-o csv`): a row per differing field of each
// object shown (one row for an object without fields), then its notes
// (source, adoption, the owning apply set) and why it is refused; the set's
// own policy changes first, under action "policy". Values as the API gives
// them: empty, not "(none)".
Table PlanTable(const v1::ApplyPlan& plan, const PlanViewOptions& options);

}  // namespace septa::cli
