// GitOps' Apply and Diff (core/apply_service.h) on the fake store: a set
// applied twice changes nothing the second time, a plan writes nothing and
// says what would not fit, one refusal leaves the whole request unwritten
// and names every refused object, ownership (adopt, other sets, prune,
// protected kinds) and stale plans.
#include "services/core/apply_service.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "services/core/session_service.h"
#include "services/core/token_delivery.h"
#include "services/core/virtual_cluster_service.h"
#include "tests/unit/services/core/core_fixture.h"

namespace septa::core {
namespace {

using tenancy::VirtualCluster;

// One node with two whole H100s.
gpu::InventoryNode TwoGpuNode() {
  gpu::InventoryNode n;
  n.name = "h100-0";
  n.cpu_milli = 96000;
  n.memory_mib = 1 << 20;
  for (int g = 0; g < 2; ++g) n.gpus.push_back({"H100-80GB", g, "h100-0-" + std::to_string(g), false, {}});
  return n;
}

VirtualCluster Gpus(const std::string& tenant, const std::string& name, int count) {
  VirtualCluster vc;
  vc.tenant = tenant;
  vc.name = name;
  vc.capacity.tier = gpu::Tier::kDedicated;
  vc.capacity.count = count;
  return vc;
}

Tenant TenantOf(const std::string& name, const std::string& display) {
  Tenant t;
  t.name = name;
  t.trust_tier = "dedicated";
  t.display_name = display;
  return t;
}

// The transport's intents, in a test: each object declared gets a name
// (its resource and declared paths) that the decoder maps back to it.
class TableDecoder final : public DeclarationDecoder {
 public:
  static std::map<std::string, ApplyObjectRequest>& Table() {
    static std::map<std::string, ApplyObjectRequest> table;
    return table;
  }
  Result<ApplyObjectRequest> Decode(std::string_view intent) const override {
    const auto it = Table().find(std::string(intent));
    if (it == Table().end()) return Internal("no such intent");
    return it->second;
  }
};

// The same object declared again has the same intent, as over the API;
// its latest declaration is the one a revert applies.
ApplyObjectRequest Object(DeclaredObject object, std::vector<std::string> declared = {}) {
  ApplyObjectRequest request{.object = std::move(object), .declared = DeclaredFields(std::move(declared))};
  const ResourceKinds kinds(gpu::Catalog::Default());
  request.intent = kinds.ResourceNameOf(request.object);
  for (const std::string& path : request.declared.paths()) request.intent += " " + path;
  TableDecoder::Table()[request.intent] = request;
  return request;
}

TokenDeclaration Token(const std::string& name, const std::string& principal, Role role, std::int64_t ttl_seconds) {
  return {.name = name,
          .principal = principal,
          .role = role,
          .ttl_seconds = ttl_seconds,
          .sink = {.ns = "ci", .name = "septa-" + name, .key = "token"}};
}

class ApplyServiceTest : public CoreTest {
 protected:
  ApplyServiceTest() {
    EXPECT_TRUE(
        store.Transact(TxMode::kReadWrite, [](Tx& tx) { return tx.Inventory().PutNode(TwoGpuNode(), {}); }).ok());
  }

  // The platform's set "prod": tenant acme and its cluster train (one GPU).
  static ApplyOrder Prod() {
    return {.apply_set = "prod",
            .objects = {Object(TenantOf("acme", "ACME"), {"display_name", "trust_tier"}),
                        Object(Gpus("acme", "train", 1), {"capacity"})}};
  }

  std::optional<ApplySet> SetRow(const std::string& tenant, const std::string& name) {
    std::optional<ApplySet> row;
    EXPECT_TRUE(store
                    .Transact(TxMode::kReadOnly,
                              [&](Tx& tx) -> Status {
                                SEPTA_ASSIGN_OR_RETURN(row, tx.ApplySets().Get(tenant, name));
                                return Status::Ok();
                              })
                    .ok());
    return row;
  }

  bool Exists(const std::string& tenant, const std::string& vcluster) {
    return vclusters.Get(Admin(), tenant, vcluster).ok();
  }

  static std::vector<ApplyAction> Actions(const ApplyOutcome& outcome) {
    std::vector<ApplyAction> actions;
    for (const ObjectOutcome& c : outcome.changes) actions.push_back(c.action);
    return actions;
  }

  CapacityLedger ledger{gpu::Catalog::Default()};
  VirtualClusterService vclusters{store, clock, ledger, gpu::Catalog::Default()};
  TableDecoder decoder;
  ApplyService apply{store, clock, ledger, gpu::Catalog::Default(), authenticator, decoder};
};

TEST_F(ApplyServiceTest, ASetAppliedTwiceChangesNothingTheSecondTime) {
  auto plan = apply.Diff(Admin(), Prod());
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  EXPECT_EQ(Actions(*plan), (std::vector{ApplyAction::kCreate, ApplyAction::kCreate}));
  EXPECT_FALSE(plan->applied);
  EXPECT_FALSE(Exists("acme", "train")) << "a plan writes nothing";
  EXPECT_FALSE(SetRow("", "prod"));

  auto first = apply.Apply(Admin(), Prod());
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_TRUE(first->applied);
  EXPECT_EQ(first->revision, 1);
  EXPECT_EQ(first->plan_etag, plan->plan_etag) << "the plan is what was applied";
  EXPECT_EQ(first->apply_set, "applysets/prod");
  auto vc = vclusters.Get(Admin(), "acme", "train");
  ASSERT_TRUE(vc.ok());
  EXPECT_TRUE(vc->reservation.has_value()) << "placed with its row";
  const std::size_t audited = Audit().size();
  const std::int64_t version = vc->vcluster.version;

  auto again = apply.Apply(Admin(), Prod());
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(Actions(*again), (std::vector{ApplyAction::kUnchanged, ApplyAction::kUnchanged}));
  EXPECT_EQ(again->revision, 1) << "a no-op apply does not move the set";
  EXPECT_EQ(Audit().size(), audited) << "nor audits";
  EXPECT_EQ(vclusters.Get(Admin(), "acme", "train")->vcluster.version, version);
  auto diff = apply.Diff(Admin(), Prod());
  ASSERT_TRUE(diff.ok());
  EXPECT_EQ(diff->plan_etag, again->plan_etag) << "an unchanged estate has a stable plan";
}

TEST_F(ApplyServiceTest, APlanNamesWhatDoesNotFitAndApplyRefusesEveryBadObjectWritingNothing) {
  ApplyOrder order = Prod();
  order.objects[1] = Object(Gpus("acme", "train", 3), {"capacity"});  // two GPUs exist
  order.objects.push_back(Object(Gpus("acme", "Bad_Name", 1), {"capacity"}));
  order.objects.push_back(Object(Gpus("acme", "eval", 1), {"capacity"}));

  auto plan = apply.Diff(Admin(), order);
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  EXPECT_EQ(Actions(*plan),
            (std::vector{ApplyAction::kCreate, ApplyAction::kRefused, ApplyAction::kRefused, ApplyAction::kCreate}));
  EXPECT_EQ(plan->changes[1].refusal.code(), Code::kResourceExhausted) << plan->changes[1].refusal.ToString();
  EXPECT_EQ(plan->changes[2].refusal.code(), Code::kInvalidArgument);

  auto applied = apply.Apply(Admin(), order);
  ASSERT_FALSE(applied.ok());
  EXPECT_EQ(applied.status().code(), Code::kFailedPrecondition) << "two refusals of different codes";
  ASSERT_EQ(applied.status().violations().size(), 2u) << applied.status().ToString();
  EXPECT_TRUE(applied.status().violations()[0].field.starts_with("objects[1]"))
      << applied.status().violations()[0].field;
  EXPECT_EQ(applied.status().violations()[1].field, "objects[2].name");
  EXPECT_FALSE(Exists("acme", "eval")) << "nothing of the request is kept";
  EXPECT_TRUE(IsNotFound(tenants.Get(Admin(), "acme").status()));
  EXPECT_FALSE(SetRow("", "prod"));
  EXPECT_TRUE(Audit().empty());
}

TEST_F(ApplyServiceTest, PruneDeletesOnlyTheSetsOwnMembersAndNeverWhatThePortalMade) {
  ASSERT_TRUE(apply.Apply(Admin(), Prod()).ok());
  VirtualCluster portal = Gpus("acme", "portal", 1);
  ASSERT_TRUE(vclusters.Create(TenantCtx("acme"), "acme", portal, "").ok());

  ApplyOrder order = Prod();
  order.objects.pop_back();  // train leaves the document
  order.prune = true;
  auto applied = apply.Apply(Admin(), order);
  ASSERT_TRUE(applied.ok()) << applied.status().ToString();
  EXPECT_EQ(Actions(*applied), (std::vector{ApplyAction::kUnchanged, ApplyAction::kDelete}));
  EXPECT_EQ(applied->changes[1].resource, "tenants/acme/vclusters/train");
  EXPECT_EQ(applied->changes[1].index, -1);
  EXPECT_FALSE(Exists("acme", "train")) << "never provisioned: removed at once";
  EXPECT_TRUE(Exists("acme", "portal")) << "made outside every set: never pruned";
  EXPECT_EQ(applied->revision, 2);

  // Without prune, a member left out is only left alone.
  ASSERT_TRUE(apply.Apply(Admin(), Prod()).ok());
  order.prune = false;
  ASSERT_TRUE(apply.Apply(Admin(), order).ok());
  EXPECT_TRUE(Exists("acme", "train"));

  // An empty document with prune is refused unless meant.
  ApplyOrder empty{.apply_set = "prod", .prune = true};
  auto refused = apply.Apply(Admin(), empty);
  EXPECT_EQ(refused.status().code(), Code::kInvalidArgument);
  EXPECT_EQ(refused.status().violations().at(0).field, "objects");
  EXPECT_TRUE(Exists("acme", "train"));
}

TEST_F(ApplyServiceTest, TiersAndTenantsArePrunedOnlyWhenTheDeletionIsConfirmed) {
  ASSERT_TRUE(apply
                  .Apply(Admin(), ApplyOrder{.apply_set = "tenants",
                                             .objects = {Object(TenantOf("globex", "Globex"), {"trust_tier"})}})
                  .ok());
  ApplyOrder prune{.apply_set = "tenants", .prune = true, .allow_empty = true};
  auto refused = apply.Apply(Admin(), prune);
  ASSERT_EQ(refused.status().code(), Code::kFailedPrecondition) << refused.status().ToString();
  EXPECT_EQ(refused.status().violations().at(0).field, "confirm_deletions");
  EXPECT_TRUE(tenants.Get(Admin(), "globex").ok());

  prune.confirm_deletions = {"tenants/globex"};
  auto pruned = apply.Apply(Admin(), prune);
  ASSERT_TRUE(pruned.ok()) << pruned.status().ToString();
  EXPECT_EQ(Actions(*pruned), std::vector{ApplyAction::kDelete});
  EXPECT_TRUE(IsNotFound(tenants.Get(Admin(), "globex").status()));
}

TEST_F(ApplyServiceTest, ObjectsOutsideTheSetAreTakenOnlyByAdoptOrForceAndTheTakeOverIsAudited) {
  MustCreate("acme", "dedicated");
  auto conflict = apply.Diff(Admin(), Prod());
  ASSERT_TRUE(conflict.ok());
  EXPECT_EQ(conflict->changes[0].action, ApplyAction::kConflict) << "acme was made outside every set";
  EXPECT_EQ(conflict->changes[0].refusal.code(), Code::kAlreadyExists);
  EXPECT_EQ(apply.Apply(Admin(), Prod()).status().code(), Code::kAlreadyExists);

  ApplyOrder adopting = Prod();
  adopting.objects[0].adopt = true;
  auto adopted = apply.Apply(Admin(), adopting);
  ASSERT_TRUE(adopted.ok()) << adopted.status().ToString();
  EXPECT_TRUE(adopted->changes[0].adopted);
  EXPECT_EQ(adopted->changes[0].action, ApplyAction::kUpdate) << "its declared display name differs";
  EXPECT_EQ(Audit("tenants/acme").front().action, "applyset.adopt");

  // Another set may not take it, unless forced.
  ApplyOrder other{.apply_set = "other", .objects = {Object(TenantOf("acme", "Taken"), {"display_name"})}};
  auto taken = apply.Diff(Admin(), other);
  ASSERT_TRUE(taken.ok());
  EXPECT_EQ(taken->changes[0].action, ApplyAction::kConflict);
  EXPECT_EQ(taken->changes[0].previous_apply_set, "applysets/prod");
  other.force_conflicts = true;
  auto forced = apply.Apply(Admin(), other);
  ASSERT_TRUE(forced.ok()) << forced.status().ToString();
  EXPECT_TRUE(forced->changes[0].adopted);
  EXPECT_EQ(tenants.Get(Admin(), "acme")->tenant.display_name, "Taken");
  const AuditRecord take = Audit("tenants/acme").front();
  EXPECT_EQ(take.action, "applyset.adopt");
  EXPECT_EQ(take.old_etag, "applysets/prod");
  EXPECT_EQ(take.new_etag, "applysets/other");
}

TEST_F(ApplyServiceTest, AnEditOutsideTheSetIsDriftNamingWhoAndWhen) {
  ASSERT_TRUE(apply.Apply(Admin(), Prod()).ok());
  clock.Advance(std::chrono::minutes(5));
  // A field the set does not own is no drift.
  TenantUpdate labels;
  labels.labels = std::map<std::string, std::string>{{"team", "ml"}};
  ASSERT_TRUE(tenants.Update(Admin(), "acme", labels, "").ok());
  EXPECT_TRUE(apply.Get(Admin(), "prod")->drifted.empty()) << "labels are not the set's";
  EXPECT_TRUE(store.Snapshot().drift_notes.empty());

  TenantUpdate edit;
  edit.display_name = "Edited in the portal";
  RequestContext portal = Admin();
  portal.request_id = "req-portal";
  portal.surface = Surface::kPortal;
  ASSERT_TRUE(tenants.Update(portal, "acme", edit, "").ok());
  EXPECT_EQ(store.Snapshot().drift_notes, std::vector<std::string>{"/prod/portal"}) << "the set's controller is told";

  auto plan = apply.Diff(Admin(), Prod());
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  ASSERT_EQ(plan->changes[0].action, ApplyAction::kUpdate);
  ASSERT_TRUE(plan->changes[0].drift.has_value());
  EXPECT_EQ(plan->changes[0].drift->principal, "admin");
  EXPECT_EQ(plan->changes[0].drift->action, "applyset.drift");
  EXPECT_EQ(plan->changes[0].drift->surface, "portal");
  EXPECT_EQ(plan->changes[0].drift->detail, "tenant.update changed display_name");
  EXPECT_EQ(plan->changes[0].drift->request_id, "req-portal");
  EXPECT_EQ(plan->changes[0].drift->time, Now(clock));
  EXPECT_EQ(plan->changes[0].fields.at(0).live, "Edited in the portal");

  // The set says so too, naming the member.
  auto status = apply.Get(Admin(), "prod");
  ASSERT_TRUE(status.ok()) << status.status().ToString();
  EXPECT_EQ(ApplySetResource(status->set.tenant, status->set.name), "applysets/prod");
  EXPECT_EQ(status->members, 2);
  ASSERT_EQ(status->drifted.size(), 1u);
  EXPECT_EQ(status->drifted[0].resource, "tenants/acme");
  EXPECT_EQ(status->drifted[0].drift.request_id, "req-portal");
  EXPECT_TRUE(IsNotFound(apply.Get(TenantCtx("acme"), "prod").status())) << "a tenant's sets are its own";
  auto listed = apply.List(Admin());
  ASSERT_TRUE(listed.ok());
  ASSERT_EQ(listed->size(), 1u);
  EXPECT_EQ((*listed)[0].set.revision, 1);

  // Applied again, it is in line; a change in Git alone is no drift.
  ASSERT_TRUE(apply.Apply(Admin(), Prod()).ok());
  EXPECT_TRUE(apply.Get(Admin(), "prod")->drifted.empty()) << "in sync again";
  ApplyOrder changed = Prod();
  changed.objects[0] = Object(TenantOf("acme", "ACME 2"), {"display_name"});
  clock.Advance(std::chrono::minutes(1));
  auto git = apply.Diff(Admin(), changed);
  ASSERT_TRUE(git.ok());
  EXPECT_EQ(git->changes[0].action, ApplyAction::kUpdate);
  EXPECT_FALSE(git->changes[0].drift.has_value());
}

TEST_F(ApplyServiceTest, ALockedSetRefusesWritesToWhatItOwnsUnlessAnAdminBreaksGlass) {
  ApplyOrder locked = Prod();
  locked.policy = SetPolicy{.on_drift = DriftPolicy::kLock};
  locked.source = "git@example.com:platform@3f9c2e1";
  ASSERT_TRUE(apply.Apply(Admin(), locked).ok());
  ASSERT_EQ(SetRow("", "prod")->on_drift, DriftPolicy::kLock);
  const std::size_t audited = Audit().size();

  TenantUpdate edit;
  edit.display_name = "Edited";
  const Status refused = tenants.Update(Admin(), "acme", edit, "").status();
  EXPECT_EQ(refused.code(), Code::kFailedPrecondition) << refused.ToString();
  EXPECT_NE(refused.message().find("applysets/prod (from git@example.com:platform@3f9c2e1)"), std::string::npos)
      << refused.message();
  ASSERT_EQ(refused.violations().size(), 1u);
  EXPECT_EQ(refused.violations()[0].field, "display_name");
  EXPECT_EQ(tenants.Update(TenantCtx("acme"), "acme", edit, "").status().code(), Code::kFailedPrecondition)
      << "the tenant's owner neither";
  VirtualCluster bigger = Gpus("acme", "train", 2);
  EXPECT_EQ(vclusters.Update(Admin(), "acme", "train", bigger, {"capacity"}, "").status().code(),
            Code::kFailedPrecondition);
  EXPECT_EQ(vclusters.Delete(Admin(), "acme", "train", "").status().code(), Code::kFailedPrecondition);
  EXPECT_EQ(Audit().size(), audited) << "nothing written";

  // What the set does not own stays editable.
  TenantUpdate labels;
  labels.labels = std::map<std::string, std::string>{{"team", "ml"}};
  EXPECT_TRUE(tenants.Update(Admin(), "acme", labels, "").ok());

  RequestContext tenant_glass = TenantCtx("acme");
  tenant_glass.break_glass = "I want to";
  EXPECT_EQ(tenants.Update(tenant_glass, "acme", edit, "").status().code(), Code::kPermissionDenied)
      << "only an admin breaks glass";
  RequestContext glass = Admin();
  glass.break_glass = "incident 4711: rename for the audit";
  glass.surface = Surface::kSeptactl;
  clock.Advance(std::chrono::seconds(1));
  ASSERT_TRUE(tenants.Update(glass, "acme", edit, "").ok());
  const AuditRecord broken = Audit("tenants/acme").at(1);  // before the update's own record
  EXPECT_EQ(broken.action, "applyset.break_glass");
  EXPECT_EQ(broken.surface, "septactl");
  EXPECT_EQ(broken.detail, "tenant.update changed display_name; reason: incident 4711: rename for the audit");
  auto status = apply.Get(Admin(), "prod");
  ASSERT_EQ(status->drifted.size(), 1u) << "glass broken shows as drift";
  EXPECT_EQ(status->drifted[0].drift.action, "applyset.break_glass");

  // The set's own apply writes its fields back, lock or not.
  auto back = apply.Apply(Admin(), locked);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(tenants.Get(Admin(), "acme")->tenant.display_name, "ACME");
}

TEST_F(ApplyServiceTest, ARevertAppliesTheSetsLastIntentAgain) {
  ApplyOrder reverting = Prod();
  reverting.policy = SetPolicy{.on_drift = DriftPolicy::kRevert};
  ASSERT_TRUE(apply.Apply(Admin(), reverting).ok());
  clock.Advance(std::chrono::minutes(1));
  TenantUpdate edit;
  edit.display_name = "Edited";
  ASSERT_TRUE(tenants.Update(Admin(), "acme", edit, "").ok()) << "revert lets the write go ahead";
  ASSERT_TRUE(vclusters.Update(Admin(), "acme", "train", Gpus("acme", "train", 2), {"capacity"}, "").ok());
  ASSERT_EQ(apply.Inspect("", "prod")->drifted.size(), 2u);

  clock.Advance(std::chrono::minutes(1));
  auto reverted = apply.Revert("", "prod");
  ASSERT_TRUE(reverted.ok()) << reverted.status().ToString();
  EXPECT_EQ(Actions(*reverted), (std::vector{ApplyAction::kUpdate, ApplyAction::kUpdate}));
  EXPECT_EQ(tenants.Get(Admin(), "acme")->tenant.display_name, "ACME");
  EXPECT_EQ(vclusters.Get(Admin(), "acme", "train")->vcluster.capacity.count, 1);
  EXPECT_EQ(SetRow("", "prod")->applied_by, "system:applyset-revert");
  EXPECT_EQ(SetRow("", "prod")->on_drift, DriftPolicy::kRevert) << "the policy is kept";
  EXPECT_TRUE(apply.Inspect("", "prod")->drifted.empty()) << "in sync again";

  // Nothing drifted: a revert is a no-op; an intent replaced since is not applied.
  const std::int64_t revision = SetRow("", "prod")->revision;
  ASSERT_TRUE(apply.Revert("", "prod").ok());
  EXPECT_EQ(SetRow("", "prod")->revision, revision);
  ApplyOrder stale = reverting;
  stale.expected_revision = revision - 1;
  EXPECT_EQ(apply.Apply(Admin(), stale).status().code(), Code::kAborted);
  EXPECT_TRUE(IsNotFound(apply.Revert("", "nope").status()));
}

TEST_F(ApplyServiceTest, ASetsPolicyIsPlannedKeptAndProtectsTheKindsItNames) {
  ASSERT_TRUE(apply.Apply(Admin(), Prod()).ok());
  ApplyOrder guarded = Prod();
  guarded.policy = SetPolicy{.on_drift = DriftPolicy::kLock, .protected_kinds = {"VirtualCluster", "VirtualCluster"}};
  auto plan = apply.Diff(Admin(), guarded);
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  EXPECT_EQ(plan->set_changes, (std::vector<FieldChange>{{"policy.on_drift", "report", "lock"},
                                                         {"policy.protected_kinds", "[]", "[VirtualCluster]"}}));
  auto applied = apply.Apply(Admin(), guarded);
  ASSERT_TRUE(applied.ok());
  EXPECT_EQ(applied->revision, 2) << "a new policy moves the set";
  EXPECT_EQ(SetRow("", "prod")->protected_kinds, std::vector<std::string>{"VirtualCluster"});
  EXPECT_TRUE(apply.Diff(Admin(), guarded)->set_changes.empty());
  EXPECT_TRUE(apply.Diff(Admin(), Prod())->set_changes.empty()) << "a request without a policy keeps the set's";

  // Pruning the cluster now needs its confirmation.
  ApplyOrder pruned{.apply_set = "prod", .objects = {guarded.objects[0]}, .prune = true};
  auto refused = apply.Apply(Admin(), pruned);
  EXPECT_EQ(refused.status().code(), Code::kFailedPrecondition) << refused.status().ToString();
  pruned.confirm_deletions = {"tenants/acme/vclusters/train"};
  ASSERT_TRUE(apply.Apply(Admin(), pruned).ok());

  ApplyOrder unknown = Prod();
  unknown.policy = SetPolicy{.protected_kinds = {"Secret"}};
  const Status bad = apply.Diff(Admin(), unknown).status();
  EXPECT_EQ(bad.code(), Code::kInvalidArgument);
  EXPECT_EQ(bad.violations().at(0).field, "policy.protected_kinds[0]");
}

// A token declared in Git: its secret is only what Begin hands to the
// sink's writer (never stored or audited), a delivery that never finished
// is revoked, the next token comes when a third of the lifetime is left, and
// a new role or a prune revokes what was delivered.
TEST_F(ApplyServiceTest, ADeclaredTokensSecretGoesOnlyToItsSinkAndIsRenewedBeforeItEnds) {
  MustCreate("acme", "shared");
  const std::vector<std::string> all = {"principal", "role", "ttl", "deliver_to"};
  ApplyOrder order{.apply_set = "prod", .objects = {Object(Token("ci", "tenant:acme", Role::kViewer, 3 * 3600), all)}};
  auto applied = apply.Apply(Admin(), order);
  ASSERT_TRUE(applied.ok()) << applied.status().ToString();
  EXPECT_EQ(applied->changes[0].kind, "ApiToken");
  EXPECT_EQ(applied->changes[0].resource, "apitokens/ci");
  ASSERT_TRUE(apply.Apply(Admin(), order).ok());
  EXPECT_EQ(Actions(*apply.Diff(Admin(), order)), std::vector{ApplyAction::kUnchanged});

  TokenDelivery delivery(store, clock, tokens);
  auto lost = delivery.Begin("ci");  // a delivery that never finishes: its secret is lost
  ASSERT_TRUE(lost.ok() && lost->deliver) << lost.status().ToString();
  auto first = delivery.Begin("ci");
  ASSERT_TRUE(first.ok() && first->deliver);
  EXPECT_NE(first->deliver->token_id, lost->deliver->token_id);
  EXPECT_EQ(first->deliver->sink, (SecretSink{.ns = "ci", .name = "septa-ci", .key = "token"}));
  EXPECT_EQ(Code::kUnauthenticated, authenticator.Authenticate(lost->deliver->secret).status().code())
      << "the lost one is revoked";
  auto principal = authenticator.Authenticate(first->deliver->secret);
  ASSERT_TRUE(principal.ok()) << principal.status().ToString();
  EXPECT_EQ(principal->ToString(), "tenant:acme");
  EXPECT_EQ(principal->role, Role::kViewer);
  ASSERT_TRUE(delivery.Finish("ci", first->deliver->token_id).ok());
  auto quiet = delivery.Begin("ci");
  ASSERT_TRUE(quiet.ok());
  EXPECT_FALSE(quiet->deliver) << "nothing due";
  EXPECT_EQ(quiet->next_due, Now(clock) + std::chrono::hours(2)) << "when a third of 3 h is left";

  clock.Advance(std::chrono::hours(2) + std::chrono::seconds(1));
  auto second = delivery.Begin("ci");
  ASSERT_TRUE(second.ok() && second->deliver);
  ASSERT_TRUE(delivery.Finish("ci", second->deliver->token_id).ok());
  EXPECT_TRUE(authenticator.Authenticate(first->deliver->secret).ok()) << "the last one lives out its hour";

  for (const AuditRecord& r : Audit()) {
    for (const std::string* field : {&r.resource, &r.old_etag, &r.new_etag, &r.detail}) {
      EXPECT_EQ(field->find(first->deliver->secret.substr(25)), std::string::npos) << "a secret in the audit log";
    }
  }
  for (const auto& [id, token] : store.Snapshot().tokens) {
    EXPECT_EQ(token.secret_hash.find(second->deliver->secret.substr(25)), std::string::npos);
  }

  // A new role revokes the delivered token at once; the next one has the role.
  order.objects[0] = Object(Token("ci", "tenant:acme", Role::kOwner, 3 * 3600), all);
  ASSERT_TRUE(apply.Apply(Admin(), order).ok());
  clock.Advance(std::chrono::seconds(6));  // past the authenticator's cache
  EXPECT_EQ(Code::kUnauthenticated, authenticator.Authenticate(second->deliver->secret).status().code());
  auto owner = delivery.Begin("ci");
  ASSERT_TRUE(owner.ok() && owner->deliver);
  EXPECT_EQ(authenticator.Authenticate(owner->deliver->secret)->role, Role::kOwner);
  ASSERT_TRUE(delivery.Finish("ci", owner->deliver->token_id).ok());

  // Pruned: revoked, and nothing more is delivered.
  ApplyOrder pruned{.apply_set = "prod", .prune = true, .allow_empty = true};
  auto gone = apply.Apply(Admin(), pruned);
  ASSERT_TRUE(gone.ok()) << gone.status().ToString();
  EXPECT_EQ(Actions(*gone), std::vector{ApplyAction::kDelete});
  clock.Advance(std::chrono::seconds(6));
  EXPECT_EQ(Code::kUnauthenticated, authenticator.Authenticate(owner->deliver->secret).status().code());
  auto after = delivery.Begin("ci");
  ASSERT_TRUE(after.ok());
  EXPECT_FALSE(after->next_due) << "the declaration is gone";
}

TEST_F(ApplyServiceTest, OnlyAdminsDeclareTokensAndEveryFieldIsChecked) {
  MustCreate("acme", "shared");
  const std::vector<std::string> all = {"principal", "role", "ttl", "deliver_to"};
  ApplyOrder mine{.apply_set = "git", .objects = {Object(Token("ci", "tenant:acme", Role::kViewer, 0), all)}};
  EXPECT_EQ(apply.Apply(TenantCtx("acme"), mine).status().code(), Code::kPermissionDenied)
      << "a tenant chooses no namespace of the host";

  auto refused = [&](TokenDeclaration token) {
    ApplyOrder order{.apply_set = "prod", .objects = {Object(std::move(token), all)}};
    const Status st = apply.Apply(Admin(), order).status();
    return st.violations().empty() ? st.message() : st.violations().front().field;
  };
  TokenDeclaration bad = Token("ci", "tenant:nope", Role::kViewer, 0);
  EXPECT_EQ(refused(bad), "objects[0].principal");
  bad = Token("ci", "tenant:acme", Role::kViewer, 60);
  EXPECT_EQ(refused(bad), "objects[0].ttl") << "shorter than 5 minutes";
  bad = Token("ci", "tenant:acme", Role::kViewer, 0);
  bad.sink.ns = "Kube_System";
  EXPECT_EQ(refused(bad), "objects[0].deliver_to.kubernetes_secret.namespace");
  bad = Token("ci", "tenant:acme", Role::kViewer, 0);
  bad.sink.key = "a/b";
  EXPECT_EQ(refused(bad), "objects[0].deliver_to.kubernetes_secret.key");
  EXPECT_TRUE(store.Snapshot().token_declarations.empty());
}

TEST_F(ApplyServiceTest, AStalePlanIsRefusedAndWritesNothing) {
  ASSERT_TRUE(apply.Apply(Admin(), Prod()).ok());
  ApplyOrder order = Prod();
  order.objects[0] = Object(TenantOf("acme", "ACME Research"), {"display_name"});
  auto plan = apply.Diff(Admin(), order);
  ASSERT_TRUE(plan.ok());
  ASSERT_EQ(plan->changes[0].action, ApplyAction::kUpdate);

  // Someone edits the tenant through REST in between.
  TenantUpdate edit;
  edit.display_name = "Edited";
  ASSERT_TRUE(tenants.Update(Admin(), "acme", edit, "").ok());
  order.expected_plan_etag = plan->plan_etag;
  auto stale = apply.Apply(Admin(), order);
  EXPECT_EQ(stale.status().code(), Code::kAborted) << stale.status().ToString();
  EXPECT_EQ(tenants.Get(Admin(), "acme")->tenant.display_name, "Edited");

  auto fresh = apply.Diff(Admin(), order);
  ASSERT_TRUE(fresh.ok());
  order.expected_plan_etag = fresh->plan_etag;
  ASSERT_TRUE(apply.Apply(Admin(), order).ok());
  EXPECT_EQ(tenants.Get(Admin(), "acme")->tenant.display_name, "ACME Research");
}

TEST_F(ApplyServiceTest, ATenantsSetsAreItsOwnAndHoldOnlyWhatItMayWrite) {
  MustCreate("acme", "dedicated");
  MustCreate("beta", "dedicated");
  ApplyOrder mine{.apply_set = "prod", .objects = {Object(Gpus("acme", "train", 1), {"capacity"})}};
  auto applied = apply.Apply(TenantCtx("acme"), mine);
  ASSERT_TRUE(applied.ok()) << applied.status().ToString();
  EXPECT_EQ(applied->apply_set, "tenants/acme/applysets/prod");
  EXPECT_TRUE(SetRow("acme", "prod"));
  EXPECT_FALSE(SetRow("", "prod")) << "the platform's set of the same name is another set";

  // beta's set may name neither acme's objects (not found, as everywhere) nor a trust tier (admins only).
  TrustTier gold;
  gold.name = "gold";
  gold.gpu_sharing = gpu::Tier::kDedicated;
  ApplyOrder theirs{.apply_set = "prod",
                    .objects = {Object(Gpus("acme", "steal", 1), {"capacity"}),
                                Object(TenantOf("acme", "Taken"), {"display_name"}), Object(gold, {"gpu_sharing"})}};
  auto plan = apply.Diff(TenantCtx("beta"), theirs);
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  EXPECT_EQ(Actions(*plan), (std::vector{ApplyAction::kRefused, ApplyAction::kRefused, ApplyAction::kRefused}));
  EXPECT_EQ(plan->changes[0].resource, "trust-tiers/gold") << "tiers first, then tenants, then clusters";
  EXPECT_EQ(plan->changes[0].refusal.code(), Code::kPermissionDenied);
  EXPECT_EQ(plan->changes[1].refusal.code(), Code::kNotFound);
  EXPECT_EQ(plan->changes[2].refusal.code(), Code::kNotFound);
  EXPECT_EQ(apply.Apply(TenantCtx("beta"), theirs).status().violations().size(), 3u);
  EXPECT_FALSE(Exists("acme", "steal"));
  EXPECT_EQ(tenants.Get(Admin(), "acme")->tenant.display_name, "");

  // A viewer may not apply at all, but sees the plan its owners' Apply would
  // carry out (a pull request's read-only token), which changes nothing.
  ApplyOrder more{.apply_set = "prod", .objects = {Object(Gpus("acme", "train", 2), {"capacity"})}};
  EXPECT_EQ(apply.Apply(TenantCtx("acme", Role::kViewer), more).status().code(), Code::kPermissionDenied);
  auto viewers_plan = apply.Diff(TenantCtx("acme", Role::kViewer), more);
  ASSERT_TRUE(viewers_plan.ok()) << viewers_plan.status().ToString();
  EXPECT_EQ(Actions(*viewers_plan), (std::vector{ApplyAction::kUpdate}));
  auto owners_plan = apply.Diff(TenantCtx("acme"), more);
  ASSERT_TRUE(owners_plan.ok()) << owners_plan.status().ToString();
  EXPECT_EQ(viewers_plan->plan_etag, owners_plan->plan_etag) << "the same plan";
  // And a viewer's plan names no more than its tenant's: beta's viewer meets acme's objects as not found.
  auto peek = apply.Diff(TenantCtx("beta", Role::kViewer), theirs);
  ASSERT_TRUE(peek.ok()) << peek.status().ToString();
  EXPECT_EQ(peek->changes[1].refusal.code(), Code::kNotFound);
}

TEST_F(ApplyServiceTest, DeclaredPathsAreTheKindsOwnAndTheRequestIsBounded) {
  ApplyOrder order{
      .apply_set = "prod",
      .objects = {Object(TenantOf("acme", "A"), {"trust_tier"}), Object(Gpus("acme", "train", 1), {"capacity.gpus"})}};
  auto folded = apply.Diff(Admin(), order);
  ASSERT_TRUE(folded.ok());
  EXPECT_EQ(folded->changes[1].action, ApplyAction::kCreate) << "capacity.gpus is capacity, written whole";

  order.objects[1].declared = DeclaredFields({"etag"});
  auto output_only = apply.Diff(Admin(), order);
  ASSERT_TRUE(output_only.ok());
  EXPECT_EQ(output_only->changes[1].refusal.violations().at(0).field, "etag");

  order.objects.push_back(Object(Gpus("acme", "train", 2)));
  auto twice = apply.Diff(Admin(), order);
  EXPECT_EQ(twice.status().violations().at(0).field, "objects[2]") << twice.status().ToString();

  EXPECT_EQ(apply.Diff(Admin(), ApplyOrder{.apply_set = "Not-A-Label"}).status().violations().at(0).field, "apply_set");
  ApplyOrder huge{.apply_set = "prod"};
  for (int i = 0; i <= 2000; ++i) huge.objects.push_back(Object(TenantOf("t" + std::to_string(i), "")));
  EXPECT_EQ(apply.Diff(Admin(), huge).status().violations().at(0).field, "objects");
}

}  // namespace
}  // namespace septa::core

namespace septa::core {
namespace {

// A pipeline's token scoped to apply sets (a token exchange rule's
// apply_sets, or CreateToken's): it applies and diffs those sets of its
// tenant and nothing else, writes nothing directly, issues no token and
// signs in to no portal; it reads what its tenant reads.
TEST_F(ApplyServiceTest, ATokenScopedToApplySetsWritesOnlyThroughThem) {
  MustCreate("acme", "dedicated");
  auto issued = tokens.Create(Admin(), {.principal = "tenant:acme",
                                        .role = "owner",
                                        .ttl = "1h",
                                        .description = "ci",
                                        .apply_sets = {"prod", "staging"}});
  ASSERT_TRUE(issued.ok()) << issued.status().ToString();
  EXPECT_EQ(issued->token.apply_sets, (std::vector<std::string>{"prod", "staging"}));
  auto principal = authenticator.Authenticate(issued->secret_text);
  ASSERT_TRUE(principal.ok()) << principal.status().ToString();
  RequestContext ci;
  ci.principal = *principal;
  ci.request_id = "req-ci";

  ApplyOrder prod{.apply_set = "prod", .objects = {Object(Gpus("acme", "train", 1), {"capacity"})}};
  auto applied = apply.Apply(ci, prod);
  ASSERT_TRUE(applied.ok()) << applied.status().ToString();
  EXPECT_TRUE(Exists("acme", "train"));

  ApplyOrder other{.apply_set = "experiments", .objects = {Object(Gpus("acme", "play", 1), {"capacity"})}};
  for (const Status& refused : {apply.Apply(ci, other).status(), apply.Diff(ci, other).status()}) {
    EXPECT_EQ(refused.code(), Code::kPermissionDenied) << refused.ToString();
    ASSERT_FALSE(refused.violations().empty());
    EXPECT_EQ(refused.violations()[0].field, "apply_set");
    EXPECT_NE(refused.message().find("scoped to the apply sets prod, staging"), std::string::npos);
  }
  EXPECT_FALSE(Exists("acme", "play"));
  EXPECT_TRUE(apply.Diff(ci, prod).ok()) << "its own set's plan";

  // Nothing written around its sets, whatever its role.
  const Status direct = vclusters.Create(ci, "acme", Gpus("acme", "side", 1), "").status();
  EXPECT_EQ(direct.code(), Code::kPermissionDenied) << direct.ToString();
  EXPECT_NE(direct.message().find("may only apply and diff them, not create virtual clusters"), std::string::npos);
  EXPECT_EQ(
      tokens.Create(ci, {.principal = "tenant:acme", .role = "owner", .ttl = "", .description = ""}).status().code(),
      Code::kPermissionDenied)
      << "no unscoped token from a scoped one";
  EXPECT_EQ(tokens.Revoke(ci, issued->token.id).code(), Code::kPermissionDenied);
  // It reads what acme reads.
  EXPECT_TRUE(vclusters.Get(ci, "acme", "train").ok());
  // No person's session from a pipeline's token.
  SessionService sessions(store, clock, random, authenticator);
  EXPECT_EQ(sessions.SignIn(issued->secret_text, "req-sign-in").status().code(), Code::kPermissionDenied);
}

TEST_F(ApplyServiceTest, AScopeNamesAtMostSixteenApplySets) {
  MustCreate("acme");
  auto bad_name = tokens.Create(
      Admin(), {.principal = "tenant:acme", .role = "owner", .ttl = "", .description = "", .apply_sets = {"Prod"}});
  ASSERT_FALSE(bad_name.status().violations().empty());
  EXPECT_EQ(bad_name.status().violations()[0].field, "apply_sets[0]");
  std::vector<std::string> many;
  for (int i = 0; i < 17; ++i) many.push_back("set-" + std::to_string(i));
  auto too_many = tokens.Create(
      Admin(), {.principal = "tenant:acme", .role = "owner", .ttl = "", .description = "", .apply_sets = many});
  ASSERT_FALSE(too_many.status().violations().empty());
  EXPECT_EQ(too_many.status().violations()[0].field, "apply_sets");
}

}  // namespace
}  // namespace septa::core
