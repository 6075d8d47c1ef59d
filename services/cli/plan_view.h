// An ApplyPlan for people, as Terraform shows a plan: a line per object
// with its action's symbol (+ create, ~ update, - delete, = unchanged,
// ! conflict or refused), under it the fields that differ and why an
// object is refused, and a count of each action at the end. Programs read
// -o json, the ApplyPlan itself.
#pragma once

#include <string>

#include "septa/v1/declarative.pb.h"

namespace septa::cli {

struct PlanViewOptions {
  bool show_unchanged = false;  // list UNCHANGED objects too
  bool applying = false;        // the plan an Apply answered: "Applied: ..." once committed
};

std::string RenderPlan(const v1::ApplyPlan& plan, const PlanViewOptions& options);

}  // namespace septa::cli
