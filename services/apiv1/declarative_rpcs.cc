// DeclarativeService over core::ApplyService: declared API resources in,
// plans out.
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/message.h>

#include <algorithm>
#include <type_traits>

#include "common/duration.h"
#include "septa/v1/declarative.pb.h"
#include "services/apiv1/convert.h"
#include "services/apiv1/declarations.h"
#include "services/apiv1/rpcs.h"
#include "services/core/apply_service.h"

namespace septa::apiv1 {
namespace {

namespace pb = google::protobuf;

// Without declared_fields, the fields the object sets (proto3 has no
// presence for scalars: a non-default value counts as set), its identity
// aside. Output-only ones among them are refused by the kind.
std::vector<std::string> FieldsSet(const pb::Message& resource) {
  std::vector<const pb::FieldDescriptor*> fields;
  resource.GetReflection()->ListFields(resource, &fields);
  std::vector<std::string> paths;
  for (const pb::FieldDescriptor* f : fields) {
    if (f->name() != "name" && f->name() != "tenant") paths.push_back(f->name());
  }
  return paths;
}

// `status` about objects[i]: its fields named from the request's root.
Status WithinObject(int i, const Status& status) {
  const std::string prefix = "objects[" + std::to_string(i) + "]";
  std::vector<FieldViolation> violations;
  for (const FieldViolation& v : status.violations()) {
    violations.push_back({v.field.empty() ? prefix : prefix + "." + v.field, v.description});
  }
  return Status(status.code(), prefix + ": " + status.message(), std::move(violations));
}

// A declared token as the kind takes it; the sink's key defaults to "token".
Result<core::TokenDeclaration> TokenDeclarationFromProto(const v1::ApiTokenDeclaration& in) {
  core::TokenDeclaration out{.name = in.name(), .principal = in.principal()};
  if (in.role().empty()) return InvalidField("role", "is required: owner or viewer");
  SEPTA_ASSIGN_OR_RETURN(out.role, core::ParseRole("role", in.role()));
  if (!in.ttl().empty()) {
    SEPTA_ASSIGN_OR_RETURN(const std::chrono::seconds ttl, ParseDuration("ttl", in.ttl()));
    if (ttl.count() <= 0) return InvalidField("ttl", "must be positive");
    out.ttl_seconds = ttl.count();
  }
  const v1::KubernetesSecretSink& secret = in.deliver_to().kubernetes_secret();
  out.sink = {.ns = secret.namespace_(), .name = secret.name(), .key = secret.key().empty() ? "token" : secret.key()};
  return out;
}

// The declaration without its source and adopt, serialized
// deterministically (map entries in key order): the same document always
// gives the same intent, so a re-apply leaves the member's row as it was.
std::string IntentOf(const v1::ApplyObject& in) {
  v1::ApplyObject intent = in;
  intent.clear_source();
  intent.clear_adopt();
  std::string bytes;
  {
    pb::io::StringOutputStream stream(&bytes);
    pb::io::CodedOutputStream coded(&stream);
    coded.SetSerializationDeterministic(true);
    intent.SerializeToCodedStream(&coded);
  }
  return bytes;
}

Result<core::ApplyObjectRequest> ObjectFromProto(const v1::ApplyObject& in) {
  core::ApplyObjectRequest out{.adopt = in.adopt(), .source = in.source(), .intent = IntentOf(in)};
  std::vector<std::string> paths(in.declared_fields().paths().begin(), in.declared_fields().paths().end());
  switch (in.resource_case()) {
    case v1::ApplyObject::kTrustTier: {
      paths = MaskPaths(*v1::TrustTier::descriptor(), paths.empty() ? FieldsSet(in.trust_tier()) : paths);
      const bool sharing = std::find(paths.begin(), paths.end(), "gpu_sharing") != paths.end();
      SEPTA_ASSIGN_OR_RETURN(core::TrustTier tier, TrustTierFromProto(in.trust_tier(), sharing));
      out.object = std::move(tier);
      break;
    }
    case v1::ApplyObject::kTenant: {
      paths = MaskPaths(*v1::Tenant::descriptor(), paths.empty() ? FieldsSet(in.tenant()) : paths);
      SEPTA_ASSIGN_OR_RETURN(core::Tenant tenant, TenantDraftFromProto(in.tenant()));
      out.object = std::move(tenant);
      break;
    }
    case v1::ApplyObject::kVirtualCluster: {
      paths = MaskPaths(*v1::VirtualCluster::descriptor(), paths.empty() ? FieldsSet(in.virtual_cluster()) : paths);
      SEPTA_ASSIGN_OR_RETURN(tenancy::VirtualCluster vc,
                             VirtualClusterFromProto(in.virtual_cluster(), /*require_capacity=*/false));
      out.object = std::move(vc);
      break;
    }
    case v1::ApplyObject::kApiToken: {
      paths = MaskPaths(*v1::ApiTokenDeclaration::descriptor(), paths.empty() ? FieldsSet(in.api_token()) : paths);
      SEPTA_ASSIGN_OR_RETURN(core::TokenDeclaration token, TokenDeclarationFromProto(in.api_token()));
      out.object = std::move(token);
      break;
    }
    case v1::ApplyObject::RESOURCE_NOT_SET:
      return InvalidField("resource", "must be one of trust_tier, tenant, virtual_cluster, api_token");
  }
  // An empty DeclaredFields means every writable field: an object that
  // sets none would declare them all at their defaults.
  if (paths.empty()) {
    return InvalidField("declared_fields", "names no field, and the resource sets none besides its identity");
  }
  out.declared = core::DeclaredFields(std::move(paths));
  return out;
}

}  // namespace

Result<core::ApplyObjectRequest> ApplyObjectDecoder::Decode(std::string_view intent) const {
  v1::ApplyObject object;
  if (intent.empty() || !object.ParseFromArray(intent.data(), static_cast<int>(intent.size()))) {
    return Internal("the member's recorded intent is not a septa.v1.ApplyObject");
  }
  return ObjectFromProto(object);
}

namespace {

core::DriftPolicy DriftPolicyFromProto(v1::ApplySetPolicy::DriftPolicy policy) {
  switch (policy) {
    case v1::ApplySetPolicy::REVERT: return core::DriftPolicy::kRevert;
    case v1::ApplySetPolicy::LOCK: return core::DriftPolicy::kLock;
    default: return core::DriftPolicy::kReport;
  }
}

v1::ApplySetPolicy::DriftPolicy ToProto(core::DriftPolicy policy) {
  switch (policy) {
    case core::DriftPolicy::kReport: return v1::ApplySetPolicy::REPORT;
    case core::DriftPolicy::kRevert: return v1::ApplySetPolicy::REVERT;
    case core::DriftPolicy::kLock: return v1::ApplySetPolicy::LOCK;
  }
  return v1::ApplySetPolicy::REPORT;
}

// ApplyRequest or DiffRequest (the same fields but the plan's etag).
template <class Request>
Result<core::ApplyOrder> OrderFromProto(const Request& in) {
  core::ApplyOrder order{.apply_set = in.apply_set(),
                         .prune = in.prune(),
                         .allow_empty = in.allow_empty(),
                         .force_conflicts = in.force_conflicts(),
                         .confirm_deletions = {in.confirm_deletions().begin(), in.confirm_deletions().end()},
                         .source = in.source()};
  if (in.has_policy()) {
    order.policy = core::SetPolicy{
        .on_drift = DriftPolicyFromProto(in.policy().on_drift()),
        .protected_kinds = {in.policy().protected_kinds().begin(), in.policy().protected_kinds().end()}};
  }
  if constexpr (std::is_same_v<Request, v1::ApplyRequest>) order.expected_plan_etag = in.expected_plan_etag();
  SEPTA_RETURN_IF_ERROR(core::CheckApplyObjectCount(in.objects_size()));  // before anything is converted
  for (int i = 0; i < in.objects_size(); ++i) {
    auto object = ObjectFromProto(in.objects(i));
    if (!object.ok()) return WithinObject(i, object.status());
    order.objects.push_back(*std::move(object));
  }
  return order;
}

}  // namespace

Result<core::ApplyOrder> ApplyOrderOf(const v1::ApplyRequest& request) { return OrderFromProto(request); }

namespace {

v1::ObjectChange::Action ToProto(core::ApplyAction action) {
  switch (action) {
    case core::ApplyAction::kCreate: return v1::ObjectChange::CREATE;
    case core::ApplyAction::kUpdate: return v1::ObjectChange::UPDATE;
    case core::ApplyAction::kDelete: return v1::ObjectChange::DELETE;
    case core::ApplyAction::kUnchanged: return v1::ObjectChange::UNCHANGED;
    case core::ApplyAction::kConflict: return v1::ObjectChange::CONFLICT;
    case core::ApplyAction::kRefused: return v1::ObjectChange::REFUSED;
  }
  return v1::ObjectChange::ACTION_UNSPECIFIED;
}

void SetDrift(v1::Drift& out, const core::AuditRecord& record) {
  out.set_principal(record.principal);
  *out.mutable_time() = ToTimestamp(record.time);
  out.set_action(record.action);
  out.set_audit_id(record.id);
  out.set_request_id(record.request_id);
  out.set_surface(record.surface);
  out.set_detail(record.detail);
}

v1::ApplySet ToProto(const core::ApplySetView& view, bool with_drift) {
  v1::ApplySet out;
  out.set_name(core::ApplySetResource(view.set.tenant, view.set.name));
  out.set_tenant(view.set.tenant);
  out.set_revision(view.set.revision);
  out.set_source(view.set.source);
  out.set_applied_by(view.set.applied_by);
  *out.mutable_apply_time() = ToTimestamp(view.set.apply_time);
  out.set_members(view.members);
  out.mutable_policy()->set_on_drift(ToProto(view.set.on_drift));
  for (const std::string& kind : view.set.protected_kinds) out.mutable_policy()->add_protected_kinds(kind);
  if (!with_drift) return out;
  out.set_sync_status(view.drifted.empty() ? v1::ApplySet::SYNCED : v1::ApplySet::OUT_OF_SYNC);
  for (const core::DriftedMember& d : view.drifted) {
    v1::DriftedMember& member = *out.add_drifted();
    member.set_kind(d.kind);
    member.set_name(d.resource);
    SetDrift(*member.mutable_drift(), d.drift);
  }
  return out;
}

v1::ApplyPlan ToProto(const core::ApplyOutcome& outcome) {
  v1::ApplyPlan out;
  out.set_apply_set(outcome.apply_set);
  out.set_plan_etag(outcome.plan_etag);
  out.set_revision(outcome.revision);
  out.set_applied(outcome.applied);
  for (const core::FieldChange& f : outcome.set_changes) {
    v1::FieldChange& field = *out.add_set_changes();
    field.set_path(f.path);
    field.set_live(f.live);
    field.set_desired(f.desired);
  }
  v1::ApplyPlan::Summary& summary = *out.mutable_summary();
  for (const core::ObjectOutcome& c : outcome.changes) {
    v1::ObjectChange& change = *out.add_changes();
    change.set_kind(c.kind);
    change.set_name(c.resource);
    change.set_action(ToProto(c.action));
    for (const core::FieldChange& f : c.fields) {
      v1::FieldChange& field = *change.add_fields();
      field.set_path(f.path);
      field.set_live(f.live);
      field.set_desired(f.desired);
    }
    change.set_adopted(c.adopted);
    change.set_previous_apply_set(c.previous_apply_set);
    if (!c.refusal.ok()) {
      change.set_code(std::string(CodeName(c.refusal.code())));
      change.set_message(c.refusal.message());  // refusals only: never a server fault
      if (!c.refusal.violations().empty()) change.set_field(c.refusal.violations().front().field);
    }
    change.set_index(c.index);
    change.set_source(c.source);
    if (c.drift) SetDrift(*change.mutable_drift(), *c.drift);
    switch (c.action) {
      case core::ApplyAction::kCreate: summary.set_creates(summary.creates() + 1); break;
      case core::ApplyAction::kUpdate: summary.set_updates(summary.updates() + 1); break;
      case core::ApplyAction::kDelete: summary.set_deletes(summary.deletes() + 1); break;
      case core::ApplyAction::kUnchanged: summary.set_unchanged(summary.unchanged() + 1); break;
      case core::ApplyAction::kConflict: summary.set_conflicts(summary.conflicts() + 1); break;
      case core::ApplyAction::kRefused: summary.set_refused(summary.refused() + 1); break;
    }
  }
  return out;
}

}  // namespace

void AddDeclarativeRpcs(Handlers& handlers, const core::UseCases& uc) {
  handlers.Add<v1::GetApplySetRequest>(
      [uc](const core::RequestContext& ctx, const v1::GetApplySetRequest& req) -> Result<v1::ApplySet> {
        SEPTA_ASSIGN_OR_RETURN(const core::ApplySetView view, uc.apply.Get(ctx, req.apply_set()));
        return ToProto(view, /*with_drift=*/true);
      });
  handlers.Add<v1::ListApplySetsRequest>(
      [uc](const core::RequestContext& ctx, const v1::ListApplySetsRequest&) -> Result<v1::ListApplySetsResponse> {
        SEPTA_ASSIGN_OR_RETURN(const std::vector<core::ApplySetView> views, uc.apply.List(ctx));
        v1::ListApplySetsResponse out;
        for (const core::ApplySetView& view : views) *out.add_apply_sets() = ToProto(view, /*with_drift=*/false);
        return out;
      });
  handlers.Add<v1::DiffRequest>(
      [uc](const core::RequestContext& ctx, const v1::DiffRequest& req) -> Result<v1::ApplyPlan> {
        SEPTA_ASSIGN_OR_RETURN(const core::ApplyOrder order, OrderFromProto(req));
        SEPTA_ASSIGN_OR_RETURN(const core::ApplyOutcome outcome, uc.apply.Diff(ctx, order));
        return ToProto(outcome);
      });
  handlers.Add<v1::ApplyRequest>(
      [uc](const core::RequestContext& ctx, const v1::ApplyRequest& req) -> Result<v1::ApplyPlan> {
        SEPTA_ASSIGN_OR_RETURN(const core::ApplyOrder order, OrderFromProto(req));
        SEPTA_ASSIGN_OR_RETURN(const core::ApplyOutcome outcome, uc.apply.Apply(ctx, order));
        return ToProto(outcome);
      });
}

}  // namespace septa::apiv1
