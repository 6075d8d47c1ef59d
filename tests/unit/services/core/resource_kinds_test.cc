// The resource-kind dispatch GitOps' Apply and Diff use: plan, apply in
// one transaction, field-level diffs over declared fields, deletes.
#include "services/core/resource_kinds.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "services/core/virtual_cluster_service.h"
#include "tests/unit/services/core/core_fixture.h"

namespace septa::core {
namespace {

using tenancy::VirtualCluster;

// One H100 node with two MIG GPUs (3g.40gb@0 + 2g.20gb@4 + 1g.10gb@6 each).
gpu::InventoryNode OneMigNode() {
  const gpu::GpuModel* h100 = gpu::Catalog::Default().Find("H100-80GB");
  gpu::InventoryNode n;
  n.name = "h100-0";
  n.cpu_milli = 96000;
  n.memory_mib = 1 << 20;
  for (int g = 0; g < 2; ++g) {
    n.gpus.push_back(
        {"H100-80GB",
         g,
         "h100-0-" + std::to_string(g),
         true,
         {{h100->ProfileIndex("3g.40gb"), 0}, {h100->ProfileIndex("2g.20gb"), 4}, {h100->ProfileIndex("1g.10gb"), 6}}});
  }
  return n;
}

VirtualCluster DeclaredMig(const std::string& tenant, const std::string& name, int count) {
  VirtualCluster vc;
  vc.tenant = tenant;
  vc.name = name;
  vc.capacity.tier = gpu::Tier::kIsolated;
  vc.capacity.mig = {{"3g.40gb", count, ""}};
  vc.quota = {4000, 8192, 20};
  return vc;
}

class ResourceKindsTest : public CoreTest {
 protected:
  ResourceKindsTest() {
    EXPECT_TRUE(
        store.Transact(TxMode::kReadWrite, [](Tx& tx) { return tx.Inventory().PutNode(OneMigNode(), {}); }).ok());
  }

  // Applies `declarations` in one transaction, as Apply will: all or nothing.
  Result<std::vector<PlannedChange>> ApplyAll(const std::vector<Declaration>& declarations,
                                              const RequestContext& ctx = Admin()) {
    return TransactFor(ledger, store,
                       [&](Tx& tx, CapacityLedger::Session& session) -> Result<std::vector<PlannedChange>> {
                         WriteScope scope{ctx, tx, &session, Now(clock)};
                         std::vector<PlannedChange> plans;
                         for (const Declaration& d : declarations) {
                           SEPTA_ASSIGN_OR_RETURN(PlannedChange plan, kinds.Apply(scope, d));
                           plans.push_back(std::move(plan));
                         }
                         return plans;
                       });
  }

  // What Apply would do, stopped by its gate before it writes (in a dry run
  // besides, so nothing could be kept).
  Result<PlannedChange> PlanOne(const Declaration& declaration, const RequestContext& ctx = Admin()) {
    std::optional<PlannedChange> planned;
    auto outcome = TransactFor(
        ledger, store,
        [&](Tx& tx, CapacityLedger::Session& session) -> Result<PlannedChange> {
          WriteScope scope{ctx, tx, &session, Now(clock)};
          return kinds.Apply(scope, declaration, [&](const PlannedChange& plan) {
            planned = plan;
            return Aborted("planned only");
          });
        },
        TxMode::kDryRun);
    if (planned) return *planned;
    return outcome;
  }

  Tenant Read(const std::string& name) {
    auto got = tenants.Get(Admin(), name);
    EXPECT_TRUE(got.ok()) << got.status().ToString();
    return got.ok() ? got->tenant : Tenant{};
  }

  static Tenant Acme() {
    Tenant t = Draft("acme", "isolated");
    t.display_name = "ACME Research";
    t.labels = {{"cost-center", "4711"}, {"team", "ml"}};
    t.quota.vclusters = 4;
    return t;
  }

  CapacityLedger ledger{gpu::Catalog::Default()};
  ResourceKinds kinds{gpu::Catalog::Default()};
  VirtualClusterService vclusters{store, clock, ledger, gpu::Catalog::Default()};
};

TEST_F(ResourceKindsTest, ATenantAndItsClusterAreCreatedInOneTransactionAndAgainChangeNothing) {
  const std::vector<Declaration> document = {{Acme(), {}}, {DeclaredMig("acme", "train", 2), {}}};
  auto first = ApplyAll(document);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  ASSERT_EQ(first->size(), 2u);
  EXPECT_EQ((*first)[0].kind, "Tenant");
  EXPECT_EQ((*first)[0].resource, "tenants/acme");
  EXPECT_EQ((*first)[0].action, PlannedAction::kCreate);
  EXPECT_EQ((*first)[1].kind, "VirtualCluster");
  EXPECT_EQ((*first)[1].resource, "tenants/acme/vclusters/train");
  EXPECT_EQ((*first)[1].action, PlannedAction::kCreate);
  auto vc = vclusters.Get(Admin(), "acme", "train");
  ASSERT_TRUE(vc.ok()) << vc.status().ToString();
  ASSERT_TRUE(vc->reservation.has_value()) << "the cluster's capacity is reserved with its row";
  EXPECT_EQ(vc->reservation->mig.size(), 2u);
  const std::size_t audited = Audit().size();
  const std::int64_t version = Read("acme").version;

  // The same document again: nothing to do, nothing written or audited.
  auto again = ApplyAll(document);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  for (const PlannedChange& plan : *again) {
    EXPECT_EQ(plan.action, PlannedAction::kUnchanged) << plan.resource;
    EXPECT_TRUE(plan.fields.empty()) << plan.resource << ": " << plan.fields[0].path;
  }
  EXPECT_EQ(Audit().size(), audited);
  EXPECT_EQ(Read("acme").version, version);
}

TEST_F(ResourceKindsTest, OneRefusedObjectLeavesNothingOfTheDocument) {
  // Two H100s hold four 3g.40gb at most, re-laid out or not.
  auto applied = ApplyAll({{Acme(), {}}, {DeclaredMig("acme", "train", 5), {}}});
  ASSERT_FALSE(applied.ok());
  EXPECT_EQ(applied.status().code(), Code::kResourceExhausted) << applied.status().ToString();
  EXPECT_TRUE(IsNotFound(tenants.Get(Admin(), "acme").status())) << "the tenant was rolled back with the cluster";
  EXPECT_TRUE(Audit().empty());
}

TEST_F(ResourceKindsTest, OnlyDeclaredFieldsAreComparedAndWritten) {
  ASSERT_TRUE(ApplyAll({{Acme(), {}}}).ok());
  Tenant desired = Acme();
  desired.display_name = "ACME";
  desired.labels = {};  // not declared below: kept
  desired.quota = {};   // likewise

  const Declaration name_only{desired, DeclaredFields({"display_name"})};
  auto plan = PlanOne(name_only);
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  EXPECT_EQ(plan->action, PlannedAction::kUpdate);
  EXPECT_EQ(plan->fields, (std::vector<FieldChange>{{"display_name", "ACME Research", "ACME"}}));
  ASSERT_TRUE(ApplyAll({name_only}).ok());
  const Tenant after = Read("acme");
  EXPECT_EQ(after.display_name, "ACME");
  EXPECT_EQ(after.labels, Acme().labels);
  EXPECT_EQ(after.quota, Acme().quota);

  // A label left out of a declared "labels" is removed; one declared member of quota changes alone.
  desired.labels = {{"team", "ml"}};
  desired.quota.vclusters = 2;
  const Declaration labels_and_quota{desired, DeclaredFields({"labels", "quota.vclusters"})};
  plan = PlanOne(labels_and_quota);
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  EXPECT_EQ(plan->fields,
            (std::vector<FieldChange>{{"labels.cost-center", "4711", ""}, {"quota.vclusters", "4", "2"}}));
  ASSERT_TRUE(ApplyAll({labels_and_quota}).ok());
  EXPECT_EQ(Read("acme").labels, (std::map<std::string, std::string>{{"team", "ml"}}));
  EXPECT_EQ(Read("acme").quota.vclusters, 2);
}

TEST_F(ResourceKindsTest, OutputOnlyFieldsAreNeverADifference) {
  ASSERT_TRUE(ApplyAll({{Acme(), {}}, {DeclaredMig("acme", "train", 1), {}}}).ok());
  Tenant tenant = Acme();
  tenant.version = 99;
  tenant.create_time = TimePoint{} + std::chrono::hours(1);
  VirtualCluster vc = DeclaredMig("acme", "train", 1);
  vc.state = tenancy::VirtualClusterState::kFailed;
  vc.generation = 7;
  vc.host_namespace = "elsewhere";
  vc.endpoint = "https://example.invalid";
  for (const Declaration& d : std::vector<Declaration>{{tenant, {}}, {vc, {}}}) {
    auto plan = PlanOne(d);
    ASSERT_TRUE(plan.ok()) << plan.status().ToString();
    EXPECT_EQ(plan->action, PlannedAction::kUnchanged) << plan->resource;
  }
}

TEST_F(ResourceKindsTest, AClusterDeclaredWithMoreCapacityIsResizedThroughItsReservation) {
  ASSERT_TRUE(ApplyAll({{Acme(), {}}, {DeclaredMig("acme", "train", 1), {}}}).ok());
  const Declaration bigger{DeclaredMig("acme", "train", 2), DeclaredFields({"capacity"})};
  auto plan = PlanOne(bigger);
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  ASSERT_EQ(plan->fields.size(), 1u);
  EXPECT_EQ(plan->fields[0].path, "capacity");
  EXPECT_EQ(plan->fields[0].live, "isolated mig=1x3g.40gb");
  EXPECT_EQ(plan->fields[0].desired, "isolated mig=2x3g.40gb");
  ASSERT_TRUE(ApplyAll({bigger}).ok());
  auto vc = vclusters.Get(Admin(), "acme", "train");
  ASSERT_TRUE(vc.ok());
  ASSERT_TRUE(vc->reservation.has_value());
  EXPECT_EQ(vc->reservation->mig.size(), 2u);
  EXPECT_EQ(vc->vcluster.generation, 2) << "capacity is desired state: its generation moves";
}

TEST_F(ResourceKindsTest, WhoMayWriteIsTheKindsOwnRule) {
  ASSERT_TRUE(ApplyAll({{Acme(), {}}}).ok());
  // A tenant's owner may not create tenants, nor set its own quota ...
  auto globex = ApplyAll({{Draft("globex", "isolated"), {}}}, TenantCtx("globex"));
  EXPECT_EQ(globex.status().code(), Code::kPermissionDenied) << globex.status().ToString();
  Tenant more = Acme();
  more.quota.vclusters = 40;
  auto quota = ApplyAll({{more, DeclaredFields({"quota"})}}, TenantCtx("acme"));
  EXPECT_EQ(quota.status().code(), Code::kPermissionDenied) << quota.status().ToString();
  // ... nor see another tenant's cluster; but may declare its own.
  auto other = ApplyAll({{DeclaredMig("globex", "x", 1), {}}}, TenantCtx("acme"));
  EXPECT_EQ(other.status().code(), Code::kNotFound) << other.status().ToString();
  auto own = ApplyAll({{DeclaredMig("acme", "train", 1), {}}}, TenantCtx("acme"));
  EXPECT_TRUE(own.ok()) << own.status().ToString();
  // A viewer writes nothing.
  auto viewer = ApplyAll({{DeclaredMig("acme", "eval", 1), {}}}, TenantCtx("acme", Role::kViewer));
  EXPECT_EQ(viewer.status().code(), Code::kPermissionDenied) << viewer.status().ToString();
}

TEST_F(ResourceKindsTest, ABadFieldIsNamed) {
  Tenant bad = Acme();
  bad.labels = {{"Bad Key!", "x"}};
  auto plan = PlanOne({bad, {}});
  ASSERT_EQ(plan.status().code(), Code::kInvalidArgument);
  ASSERT_FALSE(plan.status().violations().empty());
  EXPECT_EQ(plan.status().violations()[0].field.rfind("labels", 0), 0u) << plan.status().ToString();
  VirtualCluster vc = DeclaredMig("acme", "Not_A_Label", 1);
  plan = PlanOne({vc, {}});
  ASSERT_EQ(plan.status().code(), Code::kInvalidArgument);
  EXPECT_EQ(plan.status().violations()[0].field, "name") << plan.status().ToString();
}

TEST_F(ResourceKindsTest, OnlyWritableFieldsMayBeDeclared) {
  ASSERT_TRUE(ApplyAll({{Acme(), {}}}).ok());
  for (const char* path : {"labels", "labels.team", "quota", "quota.pods", "display_name"}) {
    EXPECT_TRUE(PlanOne({Acme(), DeclaredFields({path})}).ok()) << path;
  }
  for (const char* path : {"create_time", "version", "quota.bogus", "labelsx", "name"}) {
    auto plan = PlanOne({Acme(), DeclaredFields({path})});
    ASSERT_EQ(plan.status().code(), Code::kInvalidArgument) << path;
    EXPECT_EQ(plan.status().violations()[0].field, path);
  }
  auto vc = PlanOne({DeclaredMig("acme", "train", 1), DeclaredFields({"state"})});
  EXPECT_EQ(vc.status().code(), Code::kInvalidArgument) << "state is output only";
}

TEST_F(ResourceKindsTest, DeleteGoesThroughTheKindsOwnDelete) {
  ASSERT_TRUE(ApplyAll({{Acme(), {}}, {DeclaredMig("acme", "train", 1), {}}}).ok());
  auto remove = [&](const DeclaredObject& object) {
    return TransactFor(ledger, store, [&](Tx& tx, CapacityLedger::Session& session) -> Result<bool> {
      WriteScope scope{Admin(), tx, &session, Now(clock)};
      return kinds.Delete(scope, object);
    });
  };
  VirtualCluster train;
  train.tenant = "acme";
  train.name = "train";
  // Never provisioned on the host: released and removed at once, as DeleteVirtualCluster does.
  auto removed = remove(train);
  ASSERT_TRUE(removed.ok()) << removed.status().ToString();
  EXPECT_TRUE(*removed);
  EXPECT_TRUE(IsNotFound(vclusters.Get(Admin(), "acme", "train").status()));
  auto again = remove(train);
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE(*again) << "nothing left to delete";
  Tenant acme;
  acme.name = "acme";
  ASSERT_TRUE(remove(acme).ok());
  EXPECT_TRUE(IsNotFound(tenants.Get(Admin(), "acme").status()));
  const auto audit = Audit("tenants/acme");
  EXPECT_TRUE(
      std::any_of(audit.begin(), audit.end(), [](const AuditRecord& r) { return r.action == "tenant.delete"; }));
}

TrustTier Gold() {
  TrustTier t;
  t.name = "gold";
  t.display_name = "Gold";
  t.description = "whole GPUs";
  t.gpu_sharing = gpu::Tier::kDedicated;
  t.co_tenancy = "other gold tenants on the same node";
  t.runtime_class = "kata-qemu-nvidia-gpu";
  t.credential_ttl_max_seconds = 7200;
  t.api_limits = {100, 1 << 20, 10, 4};
  return t;
}

TEST_F(ResourceKindsTest, ATierIsDeclaredWithItsTenantsAndOnlyAdminsWriteIt) {
  Tenant acme = Acme();
  acme.trust_tier = "gold";
  // The tier first in the document: the tenant names it in the same transaction.
  auto applied = ApplyAll({{Gold(), {}}, {acme, {}}});
  ASSERT_TRUE(applied.ok()) << applied.status().ToString();
  EXPECT_EQ((*applied)[0].resource, "trust-tiers/gold");
  EXPECT_EQ((*applied)[0].action, PlannedAction::kCreate);
  auto tier = tiers.Get(Admin(), "gold");
  ASSERT_TRUE(tier.ok()) << tier.status().ToString();
  EXPECT_EQ(tier->version, 1);
  EXPECT_EQ(tier->runtime_class, "kata-qemu-nvidia-gpu");
  auto again = ApplyAll({{Gold(), {}}, {acme, {}}});
  ASSERT_TRUE(again.ok());
  EXPECT_EQ((*again)[0].action, PlannedAction::kUnchanged);

  TrustTier silver = Gold();
  silver.name = "silver";
  auto by_tenant = ApplyAll({{silver, {}}}, TenantCtx("acme"));
  EXPECT_EQ(by_tenant.status().code(), Code::kPermissionDenied) << by_tenant.status().ToString();
  TrustTier bad = Gold();
  bad.name = "bronze";
  bad.runtime_class = "Not_A_Class";
  auto refused = ApplyAll({{bad, {}}});
  ASSERT_EQ(refused.status().code(), Code::kInvalidArgument);
  EXPECT_EQ(refused.status().violations()[0].field, "runtime_class") << refused.status().ToString();
}

TEST_F(ResourceKindsTest, WhatATiersTenantsHoldPinsItsSharingAndRuntimeClass) {
  Tenant acme = Acme();
  acme.trust_tier = "gold";
  ASSERT_TRUE(ApplyAll({{Gold(), {}}, {acme, {}}}).ok());
  TrustTier shared = Gold();
  shared.gpu_sharing = gpu::Tier::kShared;
  auto sharing = ApplyAll({{shared, DeclaredFields({"gpu_sharing"})}});
  ASSERT_EQ(sharing.status().code(), Code::kFailedPrecondition) << sharing.status().ToString();
  EXPECT_EQ(sharing.status().violations()[0].field, "gpu_sharing");
  EXPECT_NE(sharing.status().message().find("acme"), std::string::npos) << sharing.status().ToString();
  TrustTier runc = Gold();
  runc.runtime_class = "runc";
  auto runtime = ApplyAll({{runc, DeclaredFields({"runtime_class"})}});
  ASSERT_EQ(runtime.status().code(), Code::kFailedPrecondition) << runtime.status().ToString();
  // Texts and limits may change under its tenants; deleting it may not.
  TrustTier texts = Gold();
  texts.description = "whole GPUs, audited";
  texts.api_limits.watches = 20;
  auto plan = PlanOne({texts, {}});
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  EXPECT_EQ(plan->fields, (std::vector<FieldChange>{{"description", "whole GPUs", "whole GPUs, audited"},
                                                    {"api_limits.watches", "10", "20"}}));
  ASSERT_TRUE(ApplyAll({{texts, {}}}).ok());
  EXPECT_EQ(tiers.Get(Admin(), "gold")->version, 2);
  TrustTier key;
  key.name = "gold";
  auto deleted = TransactFor(ledger, store, [&](Tx& tx, CapacityLedger::Session& session) -> Result<bool> {
    WriteScope scope{Admin(), tx, &session, Now(clock)};
    return kinds.Delete(scope, key);
  });
  ASSERT_EQ(deleted.status().code(), Code::kFailedPrecondition) << deleted.status().ToString();
  EXPECT_NE(deleted.status().message().find("acme"), std::string::npos);
}

TEST_F(ResourceKindsTest, ALowerCredentialCapShortensTheTiersTenantsTokens) {
  Tenant acme = Acme();
  acme.trust_tier = "gold";
  ASSERT_TRUE(ApplyAll({{Gold(), {}}, {acme, {}}}).ok());
  auto token = tokens.Create(Admin(), {"tenant:acme", "owner", "2h", "ci"});
  ASSERT_TRUE(token.ok()) << token.status().ToString();
  TrustTier shorter = Gold();
  shorter.credential_ttl_max_seconds = 600;
  ASSERT_TRUE(ApplyAll({{shorter, DeclaredFields({"credential_ttl_max"})}}).ok());
  auto listed = tokens.List(TenantCtx("acme"));
  ASSERT_TRUE(listed.ok()) << listed.status().ToString();
  ASSERT_EQ(listed->size(), 1u);
  ASSERT_TRUE((*listed)[0].expire_time.has_value());
  EXPECT_EQ(*(*listed)[0].expire_time - (*listed)[0].create_time, std::chrono::seconds(600));
}

}  // namespace
}  // namespace septa::core
