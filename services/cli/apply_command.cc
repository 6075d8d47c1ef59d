#include "services/cli/apply_command.h"

#include <google/protobuf/util/json_util.h>

#include <charconv>

#include "common/documents.h"
#include "services/base/file.h"
#include "services/cli/error_line.h"
#include "services/cli/plan_view.h"

namespace septa::cli {

namespace {

PreparedApply PrepareRequest(const ApplySetOptions& options, std::istream* in) {
  DeclaredObjects declared = ReadDeclaredObjects(options.files, in);
  PreparedApply prepared;
  prepared.errors = std::move(declared.errors);
  v1::ApplyRequest& request = prepared.request;
  const std::string named = declared.apply_set ? declared.apply_set->name : "";
  if (!options.apply_set.empty() && !named.empty() && options.apply_set != named) {
    prepared.errors.push_back("--set " + options.apply_set + " and the ApplySet document (" +
                              declared.apply_set->place.Text() + ") name different apply sets: \"" + named + "\"");
  } else if (options.apply_set.empty() && named.empty()) {
    prepared.errors.push_back("no apply set: give --set NAME or an ApplySet document");
  }
  request.set_apply_set(options.apply_set.empty() ? named : options.apply_set);
  request.set_prune(options.prune || (declared.apply_set && declared.apply_set->prune));
  if (declared.apply_set) *request.mutable_policy() = declared.apply_set->policy;
  request.set_allow_empty(options.allow_empty);
  request.set_force_conflicts(options.force_conflicts);
  for (const auto& deletion : options.confirm_deletions) request.add_confirm_deletions(deletion);
  std::string source = options.source;
  for (std::size_t i = 0; options.source.empty() && i < options.files.size(); ++i) {
    source += (i == 0 ? "" : " ") + options.files[i];
  }
  request.set_source(source);
  for (auto& object : declared.objects) {
    object.set_adopt(options.adopt);
    *request.add_objects() = std::move(object);
  }
  prepared.places = std::move(declared.places);
  return prepared;
}

// The plan `septactl diff -o json` wrote to `path`.
Result<v1::ApplyPlan> ReadPlanFile(const std::string& path) {
  auto text = base::ReadFile(path);
  if (!text.ok()) return InvalidArgument("--plan: " + text.status().message());
  const auto tree = ParseJson(*text);  // bounded, and says where JSON is malformed
  if (!tree.ok()) {
    return InvalidArgument("--plan " + path + ": " + tree.status().message() +
                           " (write it with septactl diff -o json)");
  }
  v1::ApplyPlan plan;
  google::protobuf::util::JsonParseOptions json_options;
  json_options.ignore_unknown_fields = false;
  const auto parsed = google::protobuf::util::JsonStringToMessage(*text, &plan, json_options);
  if (!parsed.ok()) {
    return InvalidArgument("--plan " + path +
                           ": not a plan of septactl diff -o json: " + std::string(parsed.message()));
  }
  return plan;
}

// The set's own name in a plan's apply_set: "prod" of "platform/prod" and
// of "tenants/acme/prod".
std::string SetName(const std::string& apply_set) { return apply_set.substr(apply_set.rfind('/') + 1); }

// objects[i] told by its document; any other field as it is.
std::string LocateField(const std::string& field, const std::vector<DocumentPlace>& places) {
  constexpr std::string_view kObjects = "objects[";
  if (!field.starts_with(kObjects)) return field;
  const std::size_t close = field.find(']');
  std::size_t index = 0;
  const char* first = field.data() + kObjects.size();
  const char* last = field.data() + (close == std::string::npos ? 0 : close);
  if (close == std::string::npos || std::from_chars(first, last, index).ptr != last || index >= places.size()) {
    return field;
  }
  std::string rest = field.substr(close + 1);
  if (rest.starts_with('.')) rest.erase(0, 1);
  const DocumentPlace& place = places[index];
  return place.Text() + (place.object.empty() ? "" : " (" + place.object + ")") + (rest.empty() ? "" : ": " + rest);
}

bool NamesAnObject(const grpc::Status& status) {
  for (const auto& violation : FieldViolations(status)) {
    if (violation.field.starts_with("objects[")) return true;
  }
  return false;
}

int Changes(const v1::ApplyPlan::Summary& s) { return s.creates() + s.updates() + s.deletes(); }

int Refusals(const v1::ApplyPlan::Summary& s) { return s.conflicts() + s.refused(); }

std::string ShowPlan(const v1::ApplyPlan& plan, OutputFormat format, const PlanViewOptions& options) {
  return format == OutputFormat::kTable ? RenderPlan(plan, options) : Render(format, plan, Table{});
}

}  // namespace

PreparedApply PrepareDiff(const DiffCommand& command, std::istream* in) { return PrepareRequest(command.options, in); }

PreparedApply PrepareApply(const ApplyCommand& command, std::istream* in) {
  PreparedApply prepared = PrepareRequest(command.options, in);
  if (command.plan_file.empty()) return prepared;
  auto plan = ReadPlanFile(command.plan_file);
  const std::string& set = prepared.request.apply_set();
  if (!plan.ok()) {
    prepared.errors.push_back(plan.status().message());
  } else if (plan->plan_etag().empty()) {
    prepared.errors.push_back("--plan " + command.plan_file + ": the plan has no plan_etag");
  } else if (!set.empty() && SetName(plan->apply_set()) != set) {
    prepared.errors.push_back("--plan " + command.plan_file + ": the plan is for apply set " + plan->apply_set() +
                              ", not " + set);
  } else {
    prepared.request.set_expected_plan_etag(plan->plan_etag());
  }
  return prepared;
}

int DiffExitCode(const v1::ApplyPlan& plan) {
  if (Refusals(plan.summary()) > 0) return kExitNotApplicable;
  return Changes(plan.summary()) > 0 || plan.set_changes_size() > 0 ? kExitChanges : kExitInSync;
}

int ApplyExitCode(const v1::ApplyPlan& plan, bool detailed_exitcode) {
  // Apply refuses a plan with a refusal as an error; a plan that still has
  // one was not applied.
  if (Refusals(plan.summary()) > 0) return kExitNotApplicable;
  const bool changed = Changes(plan.summary()) > 0 || plan.set_changes_size() > 0;
  return detailed_exitcode && plan.applied() && changed ? kExitChanges : kExitInSync;
}

int FailureExitCode(const grpc::Status& status) {
  switch (status.error_code()) {
    case grpc::StatusCode::FAILED_PRECONDITION:
    case grpc::StatusCode::ABORTED:
    case grpc::StatusCode::RESOURCE_EXHAUSTED:
    case grpc::StatusCode::ALREADY_EXISTS: return kExitNotApplicable;
    case grpc::StatusCode::PERMISSION_DENIED:
    case grpc::StatusCode::INVALID_ARGUMENT: return NamesAnObject(status) ? kExitNotApplicable : kExitError;
    default: return kExitError;
  }
}

std::string FailureLines(const grpc::Status& status, std::string_view server,
                         const std::vector<DocumentPlace>& places) {
  return ErrorLines(status, server, [&places](const std::string& field) { return LocateField(field, places); });
}

// Diff takes what Apply takes but a plan's etag (its own request message, AIP-133).
v1::DiffRequest DiffRequestOf(const v1::ApplyRequest& apply) {
  v1::DiffRequest diff;
  diff.set_apply_set(apply.apply_set());
  *diff.mutable_objects() = apply.objects();
  diff.set_prune(apply.prune());
  if (apply.has_policy()) *diff.mutable_policy() = apply.policy();
  diff.set_allow_empty(apply.allow_empty());
  diff.set_force_conflicts(apply.force_conflicts());
  *diff.mutable_confirm_deletions() = apply.confirm_deletions();
  diff.set_source(apply.source());
  return diff;
}

int SendDiff(SeptaClient& client, const DiffCommand& command, const PreparedApply& prepared, OutputFormat format,
             std::string_view server, std::ostream& out, std::ostream& err) {
  v1::ApplyPlan plan;
  const auto status =
      client.Call(client.declarative(), &v1::DeclarativeService::Stub::Diff, DiffRequestOf(prepared.request), &plan);
  if (!status.ok()) {
    err << FailureLines(status, server, prepared.places);
    return FailureExitCode(status);
  }
  out << ShowPlan(plan, format, {.show_unchanged = command.options.show_unchanged});
  return DiffExitCode(plan);
}

int SendApply(SeptaClient& client, const ApplyCommand& command, const PreparedApply& prepared, OutputFormat format,
              std::string_view server, std::ostream& out, std::ostream& err) {
  v1::ApplyPlan plan;
  const auto status = client.Call(client.declarative(), &v1::DeclarativeService::Stub::Apply, prepared.request, &plan);
  if (!status.ok()) {
    err << FailureLines(status, server, prepared.places);
    return FailureExitCode(status);
  }
  out << ShowPlan(plan, format, {.show_unchanged = command.options.show_unchanged, .applying = true});
  return ApplyExitCode(plan, command.detailed_exitcode);
}

}  // namespace septa::cli
