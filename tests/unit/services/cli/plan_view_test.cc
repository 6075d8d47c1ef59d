#include "services/cli/plan_view.h"

#include <gtest/gtest.h>

namespace septa::cli {
namespace {

using v1::ObjectChange;

ObjectChange& Change(v1::ApplyPlan& plan, const std::string& kind, const std::string& name, ObjectChange::Action action,
                     const std::string& source) {
  ObjectChange& change = *plan.add_changes();
  change.set_kind(kind);
  change.set_name(name);
  change.set_action(action);
  change.set_source(source);
  return change;
}

void AddField(ObjectChange& change, const std::string& path, const std::string& live, const std::string& desired) {
  auto& field = *change.add_fields();
  field.set_path(path);
  field.set_live(live);
  field.set_desired(desired);
}

v1::ApplyPlan ExamplePlan() {
  v1::ApplyPlan plan;
  plan.set_apply_set("platform/prod");
  plan.set_plan_etag("e41");
  plan.set_revision(41);
  auto& s = *plan.mutable_summary();
  s.set_creates(1);
  s.set_updates(1);
  s.set_deletes(1);
  s.set_unchanged(1);
  s.set_conflicts(1);
  s.set_refused(1);
  Change(plan, "TrustTier", "trust-tiers/gold", ObjectChange::UNCHANGED, "tiers.yaml#1");
  AddField(Change(plan, "Tenant", "tenants/acme", ObjectChange::UPDATE, "tenants.yaml#1"), "quota.gpu_milli", "12000",
           "8000");
  ObjectChange& create =
      Change(plan, "VirtualCluster", "tenants/acme/vclusters/eval", ObjectChange::CREATE, "vclusters.yaml#3");
  AddField(create, "capacity", "", R"({"mig":[{"profile":"1g.10gb","count":1}]})");
  AddField(create, "display_name", "", "\"Eval \x1b[31mred\"");
  create.set_adopted(true);
  Change(plan, "VirtualCluster", "tenants/acme/vclusters/old-exp", ObjectChange::DELETE, "");
  ObjectChange& refused = Change(plan, "Tenant", "tenants/globex", ObjectChange::REFUSED, "");
  refused.set_code("FAILED_PRECONDITION");
  refused.set_message("deletion protected: pass --confirm-delete tenants/globex");
  ObjectChange& conflict = Change(plan, "Tenant", "tenants/initech", ObjectChange::CONFLICT, "tenants.yaml#2");
  conflict.set_previous_apply_set("platform/other");
  conflict.set_code("FAILED_PRECONDITION");
  conflict.set_message("owned by another apply set: pass --force-conflicts");
  conflict.set_field("trust_tier");
  return plan;
}

TEST(PlanView, APlanReadsAsTerraformsDoes) {
  EXPECT_EQ(RenderPlan(ExamplePlan(), {}),
            "apply set platform/prod (revision 41)\n"
            "\n"
            "~ tenants/acme                     update     tenants.yaml#1\n"
            "    quota.gpu_milli: 12000 -> 8000\n"
            "+ tenants/acme/vclusters/eval      create     vclusters.yaml#3   (adopted)\n"
            "    capacity: (none) -> {\"mig\":[{\"profile\":\"1g.10gb\",\"count\":1}]}\n"
            "    display_name: (none) -> \"Eval \\u001b[31mred\"\n"
            "- tenants/acme/vclusters/old-exp   delete\n"
            "! tenants/globex                   refused\n"
            "    FAILED_PRECONDITION: deletion protected: pass --confirm-delete tenants/globex\n"
            "! tenants/initech                  conflict   tenants.yaml#2   (owned by platform/other)\n"
            "    FAILED_PRECONDITION: owned by another apply set: pass --force-conflicts (field: trust_tier)\n"
            "\n"
            "Plan: 1 to create, 1 to update, 1 to delete, 1 unchanged, 1 in conflict, 1 refused.\n");
}

TEST(PlanView, UnchangedObjectsOnlyWhenAsked) {
  const std::string text = RenderPlan(ExamplePlan(), {.show_unchanged = true});
  EXPECT_NE(text.find("\n= trust-tiers/gold                 unchanged   tiers.yaml#1\n"), std::string::npos) << text;
}

TEST(PlanView, AnAppliedPlanSaysWhatWasDone) {
  v1::ApplyPlan plan;
  plan.set_apply_set("tenants/acme/train");
  plan.set_revision(42);
  plan.set_applied(true);
  plan.mutable_summary()->set_creates(2);
  plan.mutable_summary()->set_unchanged(3);
  Change(plan, "VirtualCluster", "tenants/acme/vclusters/a", ObjectChange::CREATE, "a.yaml#1");
  Change(plan, "VirtualCluster", "tenants/acme/vclusters/b", ObjectChange::CREATE, "a.yaml#2");
  Change(plan, "VirtualCluster", "tenants/acme/vclusters/c", ObjectChange::UNCHANGED, "a.yaml#3");
  EXPECT_EQ(RenderPlan(plan, {.applying = true}),
            "apply set tenants/acme/train (revision 42)\n"
            "\n"
            "+ tenants/acme/vclusters/a   create   a.yaml#1\n"
            "+ tenants/acme/vclusters/b   create   a.yaml#2\n"
            "\n"
            "Applied: 2 created, 0 updated, 0 deleted, 3 unchanged.\n");
  // The same plan from Diff is a plan.
  EXPECT_NE(RenderPlan(plan, {}).find("\nPlan: 2 to create, 0 to update, 0 to delete, 3 unchanged.\n"),
            std::string::npos);
}

TEST(PlanView, DriftNamesWhoWhereWhenAndWhatAndANewPolicyIsAChange) {
  v1::ApplyPlan plan;
  plan.set_apply_set("applysets/prod");
  plan.set_revision(3);
  plan.mutable_summary()->set_updates(1);
  ObjectChange& acme = Change(plan, "Tenant", "tenants/acme", ObjectChange::UPDATE, "t.yaml#1");
  AddField(acme, "display_name", "Edited", "ACME");
  v1::Drift& drift = *acme.mutable_drift();
  drift.set_action("applyset.break_glass");
  drift.set_principal("admin");
  drift.set_surface("portal");
  drift.mutable_time()->set_seconds(1'796'000'000);
  drift.set_audit_id(88213);
  drift.set_detail("tenant.update changed display_name; reason: incident 4711");
  v1::FieldChange& policy = *plan.add_set_changes();
  policy.set_path("policy.on_drift");
  policy.set_live("report");
  policy.set_desired("lock");
  const std::string text = RenderPlan(plan, {});
  EXPECT_NE(text.find("apply set applysets/prod (revision 3)\n  policy.on_drift: report -> lock\n\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("    drift: applyset.break_glass by admin via portal at 2026-11-30T"), std::string::npos) << text;
  EXPECT_NE(text.find(" (audit 88213): tenant.update changed display_name; reason: incident 4711\n"), std::string::npos)
      << text;

  // Only the policy changes: a plan, not "No changes".
  v1::ApplyPlan only_policy;
  only_policy.set_apply_set("applysets/prod");
  only_policy.mutable_summary()->set_unchanged(2);
  *only_policy.add_set_changes() = policy;
  EXPECT_NE(RenderPlan(only_policy, {}).find("Plan: 0 to create, 0 to update, 0 to delete, 2 unchanged, a new policy."),
            std::string::npos)
      << RenderPlan(only_policy, {});
}

// -o csv on diff and apply: the plan's lines as rows, a row per field that
// differs, never an empty document.
TEST(PlanView, AsCsvARowPerFieldOfEachObjectShown) {
  EXPECT_EQ(
      Render(OutputFormat::kCsv, ExamplePlan(), PlanTable(ExamplePlan(), {})),
      "name,action,field,live,desired,notes,code,message\r\n"
      "tenants/acme,update,quota.gpu_milli,12000,8000,tenants.yaml#1,,\r\n"
      "tenants/acme/vclusters/"
      "eval,create,capacity,,\"{\"\"mig\"\":[{\"\"profile\"\":\"\"1g.10gb\"\",\"\"count\"\":1}]}\","
      "vclusters.yaml#3   (adopted),,\r\n"
      "tenants/acme/vclusters/eval,create,display_name,,\"\"\"Eval \\u001b[31mred\"\"\",vclusters.yaml#3   "
      "(adopted),,\r\n"
      "tenants/acme/vclusters/old-exp,delete,,,,,,\r\n"
      "tenants/globex,refused,,,,,FAILED_PRECONDITION,deletion protected: pass --confirm-delete tenants/globex\r\n"
      "tenants/initech,conflict,,,,tenants.yaml#2   (owned by platform/other),FAILED_PRECONDITION,"
      "owned by another apply set: pass --force-conflicts (field: trust_tier)\r\n");
  const std::string unchanged =
      Render(OutputFormat::kCsv, ExamplePlan(), PlanTable(ExamplePlan(), {.show_unchanged = true}));
  EXPECT_NE(unchanged.find("\r\ntrust-tiers/gold,unchanged,,,,tiers.yaml#1,,\r\n"), std::string::npos) << unchanged;
  v1::ApplyPlan policy;
  policy.set_apply_set("applysets/prod");
  v1::FieldChange& change = *policy.add_set_changes();
  change.set_path("policy.on_drift");
  change.set_live("report");
  change.set_desired("lock");
  EXPECT_EQ(Render(OutputFormat::kCsv, policy, PlanTable(policy, {})),
            "name,action,field,live,desired,notes,code,message\r\n"
            "applysets/prod,policy,policy.on_drift,report,lock,,,\r\n");
}

TEST(PlanView, InSync) {
  v1::ApplyPlan plan;
  plan.set_apply_set("platform/prod");
  plan.mutable_summary()->set_unchanged(14);
  Change(plan, "Tenant", "tenants/acme", ObjectChange::UNCHANGED, "t.yaml#1");
  EXPECT_EQ(RenderPlan(plan, {}), "apply set platform/prod (not applied yet)\n\nNo changes: 14 unchanged.\n");
}

}  // namespace
}  // namespace septa::cli
