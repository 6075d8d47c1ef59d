#include "services/core/apply_service.h"

#include <algorithm>
#include <map>
#include <set>
#include <utility>

#include "common/text.h"
#include "services/core/apply_set_guard.h"
#include "services/core/audit.h"
#include "services/core/crypto.h"

namespace septa::core {
namespace {

// Creates in reference order (a tenant names its tier, a virtual cluster
// and a token its tenant); deletions the other way round.
int KindRank(std::string_view kind) {
  if (kind == TrustTierKind::kKind) return 0;
  if (kind == TenantKind::kKind) return 1;
  if (kind == VirtualClusterKind::kKind) return 2;
  return 3;
}

// Trust tiers and tenants always; a set may name more.
bool IsProtectedKind(std::string_view kind, const std::vector<std::string>& protected_kinds) {
  return kind == TrustTierKind::kKind || kind == TenantKind::kKind ||
         std::find(protected_kinds.begin(), protected_kinds.end(), kind) != protected_kinds.end();
}

bool IsSetName(std::string_view name) {
  if (name.empty() || name.size() > 63 || name.front() == '-' || name.back() == '-') return false;
  return std::all_of(name.begin(), name.end(),
                     [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-'; });
}

// A refusal that is about the object (the client's to fix) rather than a
// fault of the server, which fails the whole request instead.
bool IsRefusal(Code code) {
  switch (code) {
    case Code::kInvalidArgument:
    case Code::kFailedPrecondition:
    case Code::kResourceExhausted:
    case Code::kPermissionDenied:
    case Code::kNotFound:
    case Code::kAlreadyExists:
    case Code::kOutOfRange: return true;
    default: return false;
  }
}

using ObjectKey = std::pair<std::string, std::string>;  // (kind, resource)

// What the request itself gets wrong, before any read: the set's name, the
// bounds, objects named twice, a prune of everything.
Status CheckOrder(const ApplyOrder& order, const ResourceKinds& kinds) {
  if (!IsSetName(order.apply_set)) {
    return InvalidField("apply_set", "must be a DNS label of 1-63 lower-case letters, digits and '-', not \"" +
                                         EscapeControlCharacters(order.apply_set) + "\"");
  }
  SEPTA_RETURN_IF_ERROR(CheckApplyObjectCount(order.objects.size()));
  const std::vector<std::string> no_kinds;
  const std::vector<std::string>& protected_kinds = order.policy ? order.policy->protected_kinds : no_kinds;
  for (std::size_t i = 0; i < protected_kinds.size(); ++i) {
    const std::string& kind = protected_kinds[i];
    if (kind != TrustTierKind::kKind && kind != TenantKind::kKind && kind != VirtualClusterKind::kKind &&
        kind != TokenDeclarationKind::kKind) {
      return InvalidField(
          "policy.protected_kinds[" + std::to_string(i) + "]",
          "must be TrustTier, Tenant, VirtualCluster or ApiToken, not \"" + EscapeControlCharacters(kind) + "\"");
    }
  }
  if (order.objects.empty() && order.prune && !order.allow_empty) {
    return InvalidField("objects",
                        "is empty and prune is set, which would delete every member of the set: "
                        "pass allow_empty to mean it");
  }
  std::map<ObjectKey, std::size_t> first;
  for (std::size_t i = 0; i < order.objects.size(); ++i) {
    const DeclaredObject& object = order.objects[i].object;
    const ObjectKey key{std::string(kinds.KindOf(object)), kinds.ResourceNameOf(object)};
    const auto [it, inserted] = first.emplace(key, i);
    if (!inserted) {
      return InvalidField("objects[" + std::to_string(i) + "]", "declares " + EscapeControlCharacters(key.second) +
                                                                    " again (first as objects[" +
                                                                    std::to_string(it->second) + "])");
    }
  }
  return Status::Ok();
}

// The one status an Apply with refusals answers: every refused object a
// field violation; the code the refusals share, or FAILED_PRECONDITION.
Status RefusalOf(const std::vector<ObjectOutcome>& changes) {
  std::vector<FieldViolation> violations;
  std::optional<Code> code;
  std::string first;
  for (const ObjectOutcome& c : changes) {
    if (c.action != ApplyAction::kConflict && c.action != ApplyAction::kRefused) continue;
    std::string field = c.index >= 0 ? "objects[" + std::to_string(c.index) + "]" : "confirm_deletions";
    if (c.index >= 0 && !c.refusal.violations().empty() && !c.refusal.violations().front().field.empty()) {
      field += "." + c.refusal.violations().front().field;
    }
    const std::string description = c.resource + ": " + c.refusal.message();
    if (first.empty()) first = description;
    violations.push_back({std::move(field), description});
    code = (!code || *code == c.refusal.code()) ? c.refusal.code() : Code::kFailedPrecondition;
  }
  const std::string message = std::to_string(violations.size()) + (violations.size() == 1 ? " object" : " objects") +
                              " refused, nothing applied: " + first;
  return Status(code.value_or(Code::kFailedPrecondition), message, std::move(violations));
}

// Covers the set's revision and everything the plan compared, so that any
// move of what it read changes it.
std::string PlanEtagOf(std::int64_t revision, const std::vector<FieldChange>& set_changes,
                       const std::vector<ObjectOutcome>& changes) {
  std::string text = "revision " + std::to_string(revision) + "\n";
  for (const FieldChange& f : set_changes) text += f.path + "\x1f" + f.live + "\x1f" + f.desired + "\n";
  for (const ObjectOutcome& c : changes) {
    text += c.kind + "\x1f" + c.resource + "\x1f" + std::to_string(static_cast<int>(c.action)) + "\x1f" +
            c.previous_apply_set + "\x1f" + c.refusal.message() + "\n";
    for (const FieldChange& f : c.fields) text += f.path + "\x1f" + f.live + "\x1f" + f.desired + "\n";
  }
  return Sha256Hex(text).substr(0, 32);
}

// The newest write to a field the set owns of `resource` made outside the
// set after `since` (its last apply), as GuardSetMember recorded it: who,
// where, when and which fields.
Result<std::optional<AuditRecord>> DriftOf(Tx& tx, const std::string& resource, TimePoint since) {
  SEPTA_ASSIGN_OR_RETURN(const std::vector<AuditRecord> records, tx.Audit().List(resource, 20));
  for (const AuditRecord& r : records) {  // newest first
    if (r.time <= since) break;
    if (r.action == kDriftAction || r.action == kBreakGlassAction) return std::optional<AuditRecord>(r);
  }
  return std::optional<AuditRecord>();
}

// "[VirtualCluster]": a kind list as a plan shows it.
std::string JoinedKinds(const std::vector<std::string>& kinds) { return "[" + Join(kinds, ", ") + "]"; }

std::vector<std::string> SortedUnique(std::vector<std::string> items) {
  std::sort(items.begin(), items.end());
  items.erase(std::unique(items.begin(), items.end()), items.end());
  return items;
}

// Whose sets a principal names: an admin's are the platform's (""), a
// tenant principal's its tenant's, so tenants' set names never meet. A
// principal of no tenant (a person who named none) names no sets: never
// the platform's.
Result<std::string> SetOwnerOf(const Principal& principal) {
  SEPTA_RETURN_IF_ERROR(RequireOwnTenant(principal));
  return principal.admin ? std::string() : principal.tenant;
}

ApplyAction ActionOf(PlannedAction planned) {
  switch (planned) {
    case PlannedAction::kCreate: return ApplyAction::kCreate;
    case PlannedAction::kUpdate: return ApplyAction::kUpdate;
    case PlannedAction::kUnchanged: return ApplyAction::kUnchanged;
  }
  return ApplyAction::kUnchanged;
}

}  // namespace

Status CheckApplyObjectCount(std::size_t count) {
  if (count <= kMaxApplyObjects) return Status::Ok();
  return InvalidField("objects", "holds " + std::to_string(count) + " objects; at most " +
                                     std::to_string(kMaxApplyObjects) +
                                     " per request (split the estate into several sets)");
}

std::string ApplySetResource(std::string_view tenant, std::string_view set) {
  return (tenant.empty() ? "" : "tenants/" + std::string(tenant) + "/") + "applysets/" + std::string(set);
}

ApplyService::ApplyService(Store& store, const Clock& clock, CapacityLedger& ledger, const gpu::Catalog& catalog,
                           Authenticator& authenticator, const DeclarationDecoder& decoder)
    : store_(store),
      clock_(clock),
      ledger_(ledger),
      check_ledger_(ledger.Twin()),
      authenticator_(authenticator),
      decoder_(decoder),
      kinds_(catalog) {}

namespace {
// A token scoped to apply sets writes through those (and only those) as
// its principal would: past this check, its scope is spent.
Result<RequestContext> WithinScope(const RequestContext& ctx, const std::string& set) {
  SEPTA_RETURN_IF_ERROR(SetOwnerOf(ctx.principal).status());
  SEPTA_RETURN_IF_ERROR(RequireApplySetInScope(ctx.principal, set));
  RequestContext within = ctx;
  within.principal.apply_sets.clear();
  return within;
}
}  // namespace

Result<ApplyOutcome> ApplyService::Diff(const RequestContext& ctx, const ApplyOrder& order) {
  SEPTA_ASSIGN_OR_RETURN(RequestContext as_owner, WithinScope(ctx, order.apply_set));
  // A viewer's plan is its owners': the writes are checked as theirs and
  // rolled back (a suspended tenant's stay refused, as its owners' would).
  as_owner.principal.role = Role::kOwner;
  return Run(as_owner, order, WriteMode::kValidateOnly, AuditPrincipal(ctx.principal));
}

Result<ApplyOutcome> ApplyService::Apply(const RequestContext& ctx, const ApplyOrder& order) {
  SEPTA_ASSIGN_OR_RETURN(const RequestContext within, WithinScope(ctx, order.apply_set));
  SEPTA_RETURN_IF_ERROR(RequireWriter(within.principal, "apply sets"));
  return Run(within, order, WriteMode::kCommit, AuditPrincipal(ctx.principal));
}

Result<ApplyOutcome> ApplyService::Revert(const std::string& tenant, const std::string& name) {
  struct Intent {
    ApplySet set;
    std::vector<ApplySetMember> members;
  };
  SEPTA_ASSIGN_OR_RETURN(const Intent intent, TransactFor(store_, TxMode::kReadOnly, [&](Tx& tx) -> Result<Intent> {
                           SEPTA_ASSIGN_OR_RETURN(const std::optional<ApplySet> set, tx.ApplySets().Get(tenant, name));
                           if (!set) return NotFound("apply set " + ApplySetResource(tenant, name) + " not found");
                           SEPTA_ASSIGN_OR_RETURN(std::vector<ApplySetMember> members,
                                                  tx.ApplySets().Members(tenant, name));
                           return Intent{*set, std::move(members)};
                         }));
  ApplyOrder order{.apply_set = name,
                   .source = intent.set.source,
                   .policy = SetPolicy{intent.set.on_drift, intent.set.protected_kinds},
                   .expected_revision = intent.set.revision};
  for (const ApplySetMember& m : intent.members) {
    auto object = decoder_.Decode(m.intent);
    if (!object.ok()) {
      return FailedPrecondition(m.resource + " has no intent this septad can apply again (" +
                                object.status().message() + "): apply the set again");
    }
    order.objects.push_back(*std::move(object));
  }
  // The set's owner: an admin for the platform's sets, the tenant's owner for its own.
  RequestContext ctx{.request_id = "applyset-revert", .surface = Surface::kSystem};
  ctx.principal.admin = tenant.empty();
  ctx.principal.tenant = tenant;
  ctx.principal.role = Role::kOwner;
  return Run(ctx, order, WriteMode::kCommit, "system:applyset-revert");
}

Result<ApplyOutcome> ApplyService::Run(const RequestContext& ctx, const ApplyOrder& order, WriteMode mode,
                                       const std::string& applied_by) {
  SEPTA_RETURN_IF_ERROR(CheckOrder(order, kinds_));
  SEPTA_ASSIGN_OR_RETURN(const std::string owner, SetOwnerOf(ctx.principal));
  const std::string set_resource = ApplySetResource(owner, order.apply_set);
  std::vector<std::size_t> sequence(order.objects.size());
  for (std::size_t i = 0; i < sequence.size(); ++i) sequence[i] = i;
  std::stable_sort(sequence.begin(), sequence.end(), [&](std::size_t a, std::size_t b) {
    return KindRank(kinds_.KindOf(order.objects[a].object)) < KindRank(kinds_.KindOf(order.objects[b].object));
  });
  const bool commit = mode == WriteMode::kCommit;
  std::vector<Revocation> forget;

  auto outcome = TransactFor(
      commit ? ledger_ : *check_ledger_, store_,
      [&](Tx& tx, CapacityLedger::Session& session) -> Result<ApplyOutcome> {
        WriteScope scope{ctx, tx, &session, Now(clock_), /*applying_set=*/true};
        ApplyOutcome out{.apply_set = set_resource};
        SEPTA_ASSIGN_OR_RETURN(const std::optional<ApplySet> set, tx.ApplySets().Get(owner, order.apply_set));
        const std::int64_t revision = set ? set->revision : 0;
        // The set's own members, read at once: most objects of a re-apply are.
        std::map<ObjectKey, ApplySetMember> own;
        if (set) {
          SEPTA_ASSIGN_OR_RETURN(std::vector<ApplySetMember> rows, tx.ApplySets().Members(owner, order.apply_set));
          for (ApplySetMember& m : rows) own.emplace(ObjectKey{m.kind, m.resource}, std::move(m));
        }
        if (order.expected_revision != 0 && order.expected_revision != revision) {
          return Aborted("apply set " + set_resource + " is at revision " + std::to_string(revision) + ", not " +
                         std::to_string(order.expected_revision));
        }
        // A new policy is a change of the set, even with every object as it was.
        const SetPolicy live = set ? SetPolicy{set->on_drift, set->protected_kinds} : SetPolicy();
        SetPolicy policy = order.policy.value_or(live);
        policy.protected_kinds = SortedUnique(std::move(policy.protected_kinds));
        const std::vector<std::string>& protected_kinds = policy.protected_kinds;
        CompareField(out.set_changes, DeclaredFields(), "policy.on_drift",
                     set ? std::string(DriftPolicyName(live.on_drift)) : "",
                     std::string(DriftPolicyName(policy.on_drift)));
        CompareField(out.set_changes, DeclaredFields(), "policy.protected_kinds",
                     set ? JoinedKinds(live.protected_kinds) : "", JoinedKinds(protected_kinds));
        bool changed = set && !out.set_changes.empty();
        std::vector<ApplySetMember> member_writes;  // once the set's row exists
        std::set<ObjectKey> declared;

        // Refuses `oc` for `status` when it is the object's fault; a server
        // fault fails the whole request.
        auto refuse = [&](ObjectOutcome& oc, ApplyAction action, Status status) -> Status {
          if (!IsRefusal(status.code())) return status;
          oc.action = action;
          oc.refusal = std::move(status);
          out.changes.push_back(std::move(oc));
          return Status::Ok();
        };

        for (const std::size_t i : sequence) {
          const ApplyObjectRequest& request = order.objects[i];
          ObjectOutcome oc{.kind = std::string(kinds_.KindOf(request.object)),
                           .resource = kinds_.ResourceNameOf(request.object),
                           .index = static_cast<int>(i),
                           .source = request.source};
          declared.emplace(oc.kind, oc.resource);
          const Declaration declaration{request.object, request.declared};
          // Ownership is checked on the plan, before the kind writes anything.
          std::optional<ApplySetMember> member;
          bool conflict = false;
          auto plan = kinds_.Apply(scope, declaration, [&](const PlannedChange& planned) -> Status {
            if (const auto it = own.find({oc.kind, oc.resource}); it != own.end()) {
              member = it->second;
            } else {
              SEPTA_ASSIGN_OR_RETURN(member, tx.ApplySets().MemberOf(oc.kind, oc.resource));
            }
            const bool ours = member && member->set_tenant == owner && member->set_name == order.apply_set;
            if (member && !ours) {
              oc.previous_apply_set = ApplySetResource(member->set_tenant, member->set_name);
              if (!order.force_conflicts) {
                conflict = true;
                return AlreadyExists("belongs to apply set " + oc.previous_apply_set +
                                     ": remove it there, or pass force_conflicts to take it");
              }
              oc.adopted = true;
            } else if (!member && planned.action != PlannedAction::kCreate) {
              if (!request.adopt) {
                conflict = true;
                return AlreadyExists(
                    "exists and belongs to no apply set (made through the portal, REST or the CLI): pass adopt "
                    "to manage it in this set");
              }
              oc.adopted = true;
            }
            if (ours && set && planned.action == PlannedAction::kUpdate) {  // before this apply audits it
              SEPTA_ASSIGN_OR_RETURN(oc.drift, DriftOf(tx, oc.resource, set->apply_time));
            }
            oc.fields = planned.fields;
            return Status::Ok();
          });
          if (!plan.ok()) {
            SEPTA_RETURN_IF_ERROR(refuse(oc, conflict ? ApplyAction::kConflict : ApplyAction::kRefused, plan.status()));
            continue;
          }
          if (plan->action != PlannedAction::kUnchanged) changed = true;
          oc.action = ActionOf(plan->action);
          ApplySetMember row{.kind = oc.kind,
                             .resource = oc.resource,
                             .set_tenant = owner,
                             .set_name = order.apply_set,
                             .declared = plan->declared.paths(),
                             .intent = request.intent};
          if (!member || *member != row) {
            member_writes.push_back(std::move(row));
            changed = true;
          }
          if (oc.adopted) {
            SEPTA_RETURN_IF_ERROR(tx.Audit().Append(
                AuditOf(ctx, scope.now, "applyset.adopt", oc.resource, oc.previous_apply_set, set_resource)));
          }
          out.changes.push_back(std::move(oc));
        }

        if (order.prune && set) {
          std::vector<ApplySetMember> members;
          for (const auto& [key, m] : own) members.push_back(m);
          std::stable_sort(members.begin(), members.end(), [](const ApplySetMember& a, const ApplySetMember& b) {
            return KindRank(a.kind) > KindRank(b.kind);
          });
          for (const ApplySetMember& m : members) {
            if (declared.contains({m.kind, m.resource})) continue;
            ObjectOutcome oc{.kind = m.kind, .resource = m.resource, .action = ApplyAction::kDelete};
            const auto& confirmed = order.confirm_deletions;
            if (IsProtectedKind(m.kind, protected_kinds) &&
                std::find(confirmed.begin(), confirmed.end(), m.resource) == confirmed.end()) {
              SEPTA_RETURN_IF_ERROR(refuse(oc, ApplyAction::kRefused,
                                           FailedPrecondition("its deletion is protected: confirm it with "
                                                              "confirm_deletions \"" +
                                                              m.resource + "\"")));
              continue;
            }
            SEPTA_ASSIGN_OR_RETURN(const DeclaredObject identity, kinds_.IdentityOf(m.kind, m.resource));
            auto deleted = kinds_.Delete(scope, identity);
            if (!deleted.ok()) {
              SEPTA_RETURN_IF_ERROR(refuse(oc, ApplyAction::kRefused, deleted.status()));
              continue;
            }
            SEPTA_RETURN_IF_ERROR(tx.ApplySets().DeleteMember(m.kind, m.resource));
            changed = true;
            out.changes.push_back(std::move(oc));
          }
        }

        out.plan_etag = PlanEtagOf(revision, out.set_changes, out.changes);
        out.revision = revision;
        const bool refused = std::any_of(out.changes.begin(), out.changes.end(), [](const ObjectOutcome& c) {
          return c.action == ApplyAction::kConflict || c.action == ApplyAction::kRefused;
        });
        if (!commit) return out;  // rolled back: a plan, whatever it says
        if (!order.expected_plan_etag.empty() && order.expected_plan_etag != out.plan_etag) {
          return Aborted("the plan is stale: what it covered moved since it was made (its etag " +
                         EscapeControlCharacters(order.expected_plan_etag) + ", now " + out.plan_etag +
                         "); diff again and review the new plan");
        }
        if (refused) return RefusalOf(out.changes);
        if (changed) {
          out.revision = revision + 1;
          SEPTA_RETURN_IF_ERROR(tx.ApplySets().Put(ApplySet{.tenant = owner,
                                                            .name = order.apply_set,
                                                            .revision = out.revision,
                                                            .source = order.source,
                                                            .applied_by = applied_by,
                                                            .apply_time = scope.now,
                                                            .on_drift = policy.on_drift,
                                                            .protected_kinds = protected_kinds}));
          if (!member_writes.empty()) SEPTA_RETURN_IF_ERROR(tx.ApplySets().PutMembers(member_writes));
          SEPTA_RETURN_IF_ERROR(tx.Audit().Append(AuditOf(ctx, scope.now, "applyset.apply", set_resource,
                                                          std::to_string(revision), std::to_string(out.revision))));
        }
        out.applied = true;
        forget = std::move(scope.forget);
        return out;
      },
      TxModeOf(mode));
  if (outcome.ok() && commit) ForgetAll(authenticator_, forget);
  return outcome;
}

Result<ApplySetView> ApplyService::Get(const RequestContext& ctx, const std::string& name) {
  if (!IsSetName(name)) return NotFound("apply set \"" + EscapeControlCharacters(name) + "\" not found");
  SEPTA_ASSIGN_OR_RETURN(const std::string owner, SetOwnerOf(ctx.principal));
  return ViewOf(owner, name);
}

Result<ApplySetView> ApplyService::Inspect(const std::string& tenant, const std::string& name) {
  return ViewOf(tenant, name);
}

Result<ApplySetView> ApplyService::ViewOf(const std::string& owner, const std::string& name) {
  const std::string resource = ApplySetResource(owner, name);
  return TransactFor(store_, TxMode::kReadOnly, [&](Tx& tx) -> Result<ApplySetView> {
    SEPTA_ASSIGN_OR_RETURN(const std::optional<ApplySet> set, tx.ApplySets().Get(owner, name));
    if (!set) return NotFound("apply set " + resource + " not found");
    SEPTA_ASSIGN_OR_RETURN(const std::vector<ApplySetMember> members, tx.ApplySets().Members(owner, name));
    ApplySetView view{.set = *set, .members = static_cast<int>(members.size())};
    for (const ApplySetMember& m : members) {
      SEPTA_ASSIGN_OR_RETURN(const std::optional<AuditRecord> drift, DriftOf(tx, m.resource, set->apply_time));
      if (drift) view.drifted.push_back({.kind = m.kind, .resource = m.resource, .drift = *drift});
      if (view.drifted.size() == kMaxDrifted) break;
    }
    return view;
  });
}

Result<std::vector<ApplySetView>> ApplyService::List(const RequestContext& ctx) {
  SEPTA_ASSIGN_OR_RETURN(const std::string owner, SetOwnerOf(ctx.principal));
  return TransactFor(store_, TxMode::kReadOnly, [&](Tx& tx) -> Result<std::vector<ApplySetView>> {
    SEPTA_ASSIGN_OR_RETURN(const std::vector<ApplySet> sets, tx.ApplySets().List(owner));
    std::vector<ApplySetView> views;
    for (const ApplySet& set : sets) {
      SEPTA_ASSIGN_OR_RETURN(const std::vector<ApplySetMember> members, tx.ApplySets().Members(owner, set.name));
      views.push_back({.set = set, .members = static_cast<int>(members.size())});
    }
    return views;
  });
}

}  // namespace septa::core
