#include "services/cli/plan_view.h"

#include "services/cli/views.h"

#include <algorithm>
#include <vector>

#include "services/core/validation.h"

namespace septa::cli {

namespace {

using v1::ObjectChange;

struct ActionLook {
  char symbol;
  std::string word;
};

ActionLook LookOf(ObjectChange::Action action) {
  switch (action) {
    case ObjectChange::CREATE: return {'+', "create"};
    case ObjectChange::UPDATE: return {'~', "update"};
    case ObjectChange::DELETE: return {'-', "delete"};
    case ObjectChange::UNCHANGED: return {'=', "unchanged"};
    case ObjectChange::CONFLICT: return {'!', "conflict"};
    case ObjectChange::REFUSED: return {'!', "refused"};
    default: break;
  }
  return {'?', ObjectChange::Action_Name(action)};
}

// What the server says is shown, never obeyed by the terminal.
std::string Shown(const std::string& text) { return core::EscapeControlCharacters(text); }

// A value as the API's JSON shows it; "(none)" for an absent one.
std::string ShownValue(const std::string& value) { return value.empty() ? "(none)" : Shown(value); }

// Where the object is declared, and how it came into the set or who owns it.
std::string Notes(const ObjectChange& change) {
  std::string notes = Shown(change.source());
  auto add = [&notes](const std::string& note) { notes += (notes.empty() ? "" : "   ") + note; };
  const std::string previous = Shown(change.previous_apply_set());
  if (change.action() == ObjectChange::CONFLICT && !previous.empty()) {
    add("(owned by " + previous + ")");
  } else if (change.adopted()) {
    add(previous.empty() ? "(adopted)" : "(taken from " + previous + ")");
  }
  return notes;
}

std::string Padded(const std::string& text, std::size_t width) {
  return text + std::string(width > text.size() ? width - text.size() : 0, ' ');
}

std::string Summary(const v1::ApplyPlan& plan, const PlanViewOptions& options) {
  const auto& s = plan.summary();
  const auto n = [](int count) { return std::to_string(count); };
  const std::string policy = plan.set_changes_size() > 0 ? ", the set's policy" : "";
  if (s.creates() + s.updates() + s.deletes() + s.conflicts() + s.refused() == 0 && policy.empty()) {
    return "No changes: " + n(s.unchanged()) + " unchanged.";
  }
  if (options.applying && plan.applied()) {
    return "Applied: " + n(s.creates()) + " created, " + n(s.updates()) + " updated, " + n(s.deletes()) + " deleted, " +
           n(s.unchanged()) + " unchanged" + policy + ".";
  }
  std::string text = "Plan: " + n(s.creates()) + " to create, " + n(s.updates()) + " to update, " + n(s.deletes()) +
                     " to delete, " + n(s.unchanged()) + " unchanged" + (policy.empty() ? "" : ", a new policy");
  if (s.conflicts() > 0) text += ", " + n(s.conflicts()) + " in conflict";
  if (s.refused() > 0) text += ", " + n(s.refused()) + " refused";
  return text + (options.applying ? ". Nothing was applied." : ".");
}

std::vector<const ObjectChange*> ShownChanges(const v1::ApplyPlan& plan, const PlanViewOptions& options) {
  std::vector<const ObjectChange*> shown;
  for (const auto& change : plan.changes()) {
    if (change.action() != ObjectChange::UNCHANGED || options.show_unchanged) shown.push_back(&change);
  }
  return shown;
}

}  // namespace

Table PlanTable(const v1::ApplyPlan& plan, const PlanViewOptions& options) {
  Table table{.headers = {"Name", "Action", "Field", "Live", "Desired", "Notes", "Code", "Message"}, .rows = {}};
  for (const auto& field : plan.set_changes()) {
    table.rows.push_back({plan.apply_set(), "policy", field.path(), field.live(), field.desired(), "", "", ""});
  }
  for (const ObjectChange* change : ShownChanges(plan, options)) {
    const std::string action = LookOf(change->action()).word;
    const std::string message =
        change->message() + (change->field().empty() ? "" : " (field: " + change->field() + ")");
    if (change->fields().empty()) {
      table.rows.push_back({change->name(), action, "", "", "", Notes(*change), change->code(), message});
    }
    for (const auto& field : change->fields()) {
      table.rows.push_back({change->name(), action, field.path(), field.live(), field.desired(), Notes(*change),
                            change->code(), message});
    }
  }
  return table;
}

std::string RenderPlan(const v1::ApplyPlan& plan, const PlanViewOptions& options) {
  const std::vector<const ObjectChange*> shown = ShownChanges(plan, options);
  std::size_t name_width = 0, action_width = 0;
  for (const ObjectChange* change : shown) {
    name_width = std::max(name_width, Shown(change->name()).size());
    action_width = std::max(action_width, LookOf(change->action()).word.size());
  }

  std::string text =
      "apply set " + Shown(plan.apply_set()) +
      (plan.revision() == 0 ? " (not applied yet)" : " (revision " + std::to_string(plan.revision()) + ")") + "\n";
  for (const auto& field : plan.set_changes()) {  // the set's own policy
    text += "  " + Shown(field.path()) + ": " + ShownValue(field.live()) + " -> " + ShownValue(field.desired()) + "\n";
  }
  text += "\n";
  for (const ObjectChange* change : shown) {
    const ActionLook look = LookOf(change->action());
    std::string line = std::string(1, look.symbol) + " " + Padded(Shown(change->name()), name_width) + "   " +
                       Padded(look.word, action_width) + "   " + Notes(*change);
    line.erase(line.find_last_not_of(' ') + 1);
    text += line + "\n";
    if (change->has_drift()) {  // edited outside Git since the set's last apply: who, where, when, what
      const v1::Drift& drift = change->drift();
      text += "    drift: " + Shown(drift.action()) + " by " + Shown(drift.principal()) +
              (drift.surface().empty() ? "" : " via " + Shown(drift.surface())) + " at " +
              FormatTime(drift.time(), drift.has_time()) + " (audit " + std::to_string(drift.audit_id()) + ")" +
              (drift.detail().empty() ? "" : ": " + Shown(drift.detail())) + "\n";
    }
    for (const auto& field : change->fields()) {
      text +=
          "    " + Shown(field.path()) + ": " + ShownValue(field.live()) + " -> " + ShownValue(field.desired()) + "\n";
    }
    if (!change->code().empty() || !change->message().empty()) {
      text += "    " + Shown(change->code()) + (change->code().empty() ? "" : ": ") + Shown(change->message()) +
              (change->field().empty() ? "" : " (field: " + Shown(change->field()) + ")") + "\n";
    }
  }
  if (!shown.empty()) text += "\n";
  return text + Summary(plan, options) + "\n";
}

}  // namespace septa::cli
