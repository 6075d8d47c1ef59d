#include "services/cli/apply_command.h"

#include <google/protobuf/util/json_util.h>

#include <charconv>
#include <map>

#include "common/documents.h"
#include "services/base/file.h"
#include "services/cli/error_line.h"
#include "services/cli/plan_view.h"
#include "services/cli/views.h"
#include "services/core/validation.h"
#include "tenancy/virtual_cluster_ref.h"

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
  return format == OutputFormat::kTable ? RenderPlan(plan, options) : Render(format, plan, PlanTable(plan, options));
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
              std::string_view server, const Clock& clock, std::ostream& out, std::ostream& err) {
  v1::ApplyPlan plan;
  const auto status = client.Call(client.declarative(), &v1::DeclarativeService::Stub::Apply, prepared.request, &plan);
  if (!status.ok()) {
    err << FailureLines(status, server, prepared.places);
    return FailureExitCode(status);
  }
  out << ShowPlan(plan, format, {.show_unchanged = command.options.show_unchanged, .applying = true});
  out.flush();  // the plan before the wait's progress
  const int code = ApplyExitCode(plan, command.detailed_exitcode);
  if (!command.wait.wait || code == kExitNotApplicable) return code;
  const int waited = WaitForApply(ApplyWaitTargets(plan), command.wait.timeout, clock, ReaderOf(client), server, err);
  return waited == kExitInSync ? code : waited;
}

namespace {

// "tenants/acme/vclusters/train" as its tenant and name.
std::optional<tenancy::VirtualClusterRef> VirtualClusterOf(const std::string& resource) {
  constexpr std::string_view kTenants = "tenants/", kVclusters = "/vclusters/";
  const std::size_t at = resource.find(kVclusters);
  if (!resource.starts_with(kTenants) || at == std::string::npos || at <= kTenants.size()) return std::nullopt;
  tenancy::VirtualClusterRef ref{.tenant = resource.substr(kTenants.size(), at - kTenants.size()),
                                 .vcluster = resource.substr(at + kVclusters.size())};
  if (ref.vcluster.empty() || ref.vcluster.find('/') != std::string::npos) return std::nullopt;
  return ref;
}

std::string ResourceOf(const WaitTarget& target) { return tenancy::VirtualClusterResource(target.tenant, target.name); }

// What a read showed: "PROVISIONING", "READY", "gone".
std::string StateWord(const WaitTarget& target) {
  if (target.gone) return "gone";
  if (!target.seen) return "not read";
  return v1::VirtualCluster::State_Name(target.seen->state());
}

// A virtual cluster the wait ended on: its state and each condition that is
// not True ("PROVISIONING, CapacityReady=False (MigRelayoutPending: ...)").
std::string NotReadyText(const WaitTarget& target) {
  std::string text = ResourceOf(target) + ": " + StateWord(target);
  if (target.gone && target.goal == WaitGoal::kReady) text += " (deleted since the apply)";
  if (!target.seen) return text;
  for (const auto& c : target.seen->conditions()) {
    if (c.status() != "True") text += ", " + DescribeCondition(*target.seen, c.type());
  }
  return text;
}

std::string VirtualClusters(std::size_t n) {
  return std::to_string(n) + (n == 1 ? " virtual cluster" : " virtual clusters");
}

// The progress line: the virtual clusters still waited for, the first few by name.
std::string WaitingLine(const std::vector<WaitTarget>& targets) {
  constexpr std::size_t kNamed = 5;
  std::size_t waiting = 0;
  std::string names;
  for (const WaitTarget& target : targets) {
    if (StateOf(target) != TargetState::kWaiting) continue;
    if (++waiting <= kNamed) names += (names.empty() ? "" : ", ") + ResourceOf(target) + " " + StateWord(target);
  }
  if (waiting == 0) return "";
  if (waiting > kNamed) names += ", and " + std::to_string(waiting - kNamed) + " more";
  return "waiting for " + VirtualClusters(waiting) + ": " + names;
}

}  // namespace

std::vector<WaitTarget> ApplyWaitTargets(const v1::ApplyPlan& plan) {
  std::vector<WaitTarget> targets;
  for (const auto& change : plan.changes()) {
    if (change.kind() != "VirtualCluster") continue;
    const auto ref = VirtualClusterOf(change.name());
    if (!ref) continue;
    switch (change.action()) {
      case v1::ObjectChange::CREATE:
      case v1::ObjectChange::UPDATE:
      case v1::ObjectChange::UNCHANGED:
        targets.push_back({.tenant = ref->tenant, .name = ref->vcluster, .goal = WaitGoal::kReady});
        break;
      case v1::ObjectChange::DELETE:
        targets.push_back({.tenant = ref->tenant, .name = ref->vcluster, .goal = WaitGoal::kGone});
        break;
      default: break;  // a plan that was applied has no conflict or refusal
    }
  }
  return targets;
}

int WaitForApply(std::vector<WaitTarget> targets, std::chrono::milliseconds timeout, const Clock& clock,
                 const ReadVirtualCluster& read, std::string_view server, std::ostream& err) {
  if (targets.empty()) return kExitInSync;
  std::string shown;  // the progress line last printed
  const auto progress = [&] {
    const std::string line = WaitingLine(targets);
    if (line.empty() || line == shown) return;
    shown = line;
    err << core::EscapeControlCharacters(line) << "\n" << std::flush;
  };
  const WaitOutcome outcome = WaitFor(targets, timeout, clock, read, progress);
  const auto lines = [&](TargetState which) {
    std::string text;
    for (const WaitTarget& target : targets) {
      if (StateOf(target) == which) text += "  " + core::EscapeControlCharacters(NotReadyText(target)) + "\n";
    }
    return text;
  };
  const auto count = [&](TargetState which) {
    return static_cast<std::size_t>(
        std::count_if(targets.begin(), targets.end(), [&](const WaitTarget& t) { return StateOf(t) == which; }));
  };
  const std::string of = " of " + VirtualClusters(targets.size());
  switch (outcome.end) {
    case WaitEnd::kReached: {
      std::map<std::string, int> states;  // "READY", "SLEEPING", "gone": how many
      for (const WaitTarget& target : targets) ++states[StateWord(target)];
      std::string tally;
      for (const char* word : {"READY", "SLEEPING", "gone"}) {
        if (states.count(word)) tally += (tally.empty() ? "" : ", ") + std::to_string(states[word]) + " " + word;
      }
      err << "waited for " << VirtualClusters(targets.size()) << ": " << tally << "\n";
      return kExitInSync;
    }
    case WaitEnd::kFailed:
      err << ErrorLine(FailedPrecondition(std::to_string(count(TargetState::kFailed)) + of +
                                          " can no longer become READY; stopped waiting"))
          << "\n"
          << lines(TargetState::kFailed);
      return kExitWaitTimedOut;
    case WaitEnd::kTimedOut:
      err << ErrorLine(DeadlineExceeded("gave up waiting after " + FormatWaitTimeout(timeout) + ": " +
                                        std::to_string(count(TargetState::kWaiting)) + of + " not ready"))
          << "\n"
          << lines(TargetState::kWaiting);
      return kExitWaitTimedOut;
    case WaitEnd::kReadFailed: break;
  }
  err << ErrorLine(outcome.status, server) << "\n";
  return kExitWaitTimedOut;  // applied: 2 would say nothing was
}

std::string ShowApplySets(const v1::ListApplySetsResponse& sets, OutputFormat format) {
  return Render(format, sets, ApplySetTable(sets.apply_sets(), /*sync=*/false));
}

std::string ShowApplySet(const v1::ApplySet& set, OutputFormat format) {
  std::string text = Render(format, set, ApplySetTable(AsList(set), /*sync=*/true));
  if (format == OutputFormat::kTable && !set.drifted().empty()) {
    text += "\n" + RenderTable(DriftedMemberTable(set.drifted()));
  }
  return text;
}

int SendApplySetList(SeptaClient& client, OutputFormat format, std::string_view server, std::ostream& out,
                     std::ostream& err) {
  v1::ListApplySetsResponse sets;
  const auto status = client.Call(client.declarative(), &v1::DeclarativeService::Stub::ListApplySets,
                                  v1::ListApplySetsRequest(), &sets);
  if (!status.ok()) {
    err << ErrorLine(status, server) << "\n";
    return kExitError;
  }
  out << ShowApplySets(sets, format);
  return kExitInSync;
}

int SendApplySetGet(SeptaClient& client, const ApplySetGet& command, OutputFormat format, std::string_view server,
                    std::ostream& out, std::ostream& err) {
  v1::GetApplySetRequest request;
  request.set_apply_set(command.name);
  v1::ApplySet set;
  const auto status = client.Call(client.declarative(), &v1::DeclarativeService::Stub::GetApplySet, request, &set);
  if (!status.ok()) {
    err << ErrorLine(status, server) << "\n";
    return kExitError;
  }
  out << ShowApplySet(set, format);
  return command.exit_code && set.sync_status() == v1::ApplySet::OUT_OF_SYNC ? kExitChanges : kExitInSync;
}

}  // namespace septa::cli
