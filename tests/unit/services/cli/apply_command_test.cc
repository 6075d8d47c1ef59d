// septactl diff and apply without a server: the request from documents and
// flags, --plan, the exit codes, and a refusal told by the documents.
#include "services/cli/apply_command.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "google/rpc/error_details.pb.h"
#include "google/rpc/status.pb.h"
#include "services/cli/output.h"

namespace septa::cli {
namespace {

namespace fs = std::filesystem;
using testing::ElementsAre;

constexpr char kDocuments[] = R"(apiVersion: septa.dev/v1
kind: Tenant
metadata: {name: acme}
spec: {trustTier: gold}
---
apiVersion: septa.dev/v1
kind: VirtualCluster
metadata: {name: train, tenant: acme}
spec: {quota: {pods: 50}}
)";

constexpr char kApplySet[] = "apiVersion: septa.dev/v1\nkind: ApplySet\nmetadata: {name: prod}\nspec: {prune: true}\n";

PreparedApply Diff(const ApplySetOptions& options, const std::string& stdin_text) {
  std::istringstream in(stdin_text);
  return PrepareDiff(DiffCommand{options}, &in);
}

ApplySetOptions FromStdin() {
  ApplySetOptions options;
  options.files = {"-"};
  return options;
}

TEST(ApplyRequest, TheFlagsReachEveryObjectAndTheRequest) {
  ApplySetOptions options = FromStdin();
  options.apply_set = "prod";
  options.prune = true;
  options.allow_empty = true;
  options.force_conflicts = true;
  options.adopt = true;
  options.confirm_deletions = {"tenants/globex", "trust-tiers/gold"};
  const PreparedApply prepared = Diff(options, kDocuments);
  ASSERT_THAT(prepared.errors, ElementsAre());
  const v1::ApplyRequest& r = prepared.request;
  EXPECT_EQ(r.apply_set(), "prod");
  EXPECT_TRUE(r.prune());
  EXPECT_TRUE(r.allow_empty());
  EXPECT_TRUE(r.force_conflicts());
  EXPECT_THAT(r.confirm_deletions(), ElementsAre("tenants/globex", "trust-tiers/gold"));
  EXPECT_EQ(r.source(), "-");
  EXPECT_EQ(r.expected_plan_etag(), "");
  ASSERT_EQ(r.objects_size(), 2);
  EXPECT_TRUE(r.objects(0).adopt());
  EXPECT_TRUE(r.objects(1).adopt());
  EXPECT_EQ(r.objects(1).virtual_cluster().tenant(), "acme");
  EXPECT_THAT(r.objects(1).declared_fields().paths(), ElementsAre("quota.pods"));
  ASSERT_EQ(prepared.places.size(), 2u);
  EXPECT_EQ(prepared.places[1].object, "VirtualCluster acme/train");

  // Without flags: nothing of it.
  ApplySetOptions plain = FromStdin();
  plain.apply_set = "prod";
  plain.source = "github.com/acme/platform@3f9c2e1";
  const PreparedApply quiet = Diff(plain, kDocuments);
  ASSERT_THAT(quiet.errors, ElementsAre());
  EXPECT_FALSE(quiet.request.prune() || quiet.request.allow_empty() || quiet.request.force_conflicts());
  EXPECT_FALSE(quiet.request.objects(0).adopt());
  EXPECT_EQ(quiet.request.source(), "github.com/acme/platform@3f9c2e1");
}

TEST(ApplyRequest, TheSetIsNamedByTheFlagOrTheApplySetDocument) {
  const PreparedApply from_document = Diff(FromStdin(), std::string(kApplySet) + "---\n" + kDocuments);
  ASSERT_THAT(from_document.errors, ElementsAre());
  EXPECT_EQ(from_document.request.apply_set(), "prod");
  EXPECT_TRUE(from_document.request.prune());  // the document's spec.prune
  EXPECT_EQ(from_document.request.objects_size(), 2);

  ApplySetOptions agreeing = FromStdin();
  agreeing.apply_set = "prod";
  EXPECT_THAT(Diff(agreeing, std::string(kApplySet) + "---\n" + kDocuments).errors, ElementsAre());

  ApplySetOptions other = FromStdin();
  other.apply_set = "staging";
  EXPECT_THAT(Diff(other, std::string(kApplySet) + "---\n" + kDocuments).errors,
              ElementsAre("--set staging and the ApplySet document (<stdin> document 1) name different apply sets: "
                          "\"prod\""));
  EXPECT_THAT(Diff(FromStdin(), kDocuments).errors,
              ElementsAre("no apply set: give --set NAME or an ApplySet document"));
}

class PlanFile : public testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(testing::TempDir()) /
           ("septactl-plan-" + std::string(testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string Write(const std::string& text) {
    const std::string path = (dir_ / "plan.json").string();
    std::ofstream(path) << text;
    return path;
  }

  PreparedApply Apply(const std::string& plan_file) {
    ApplyCommand command;
    command.options = FromStdin();
    command.options.apply_set = "prod";
    command.plan_file = plan_file;
    std::istringstream in(kDocuments);
    return PrepareApply(command, &in);
  }

  fs::path dir_;
};

TEST_F(PlanFile, ThePlanDiffPrintedIsAppliedByItsEtag) {
  v1::ApplyPlan plan;
  plan.set_apply_set("platform/prod");
  plan.set_plan_etag("W/\"rev-41-abc\"");
  plan.mutable_summary()->set_creates(1);
  const PreparedApply prepared = Apply(Write(RenderJson(plan)));  // what `septactl diff -o json` prints
  ASSERT_THAT(prepared.errors, ElementsAre());
  EXPECT_EQ(prepared.request.expected_plan_etag(), "W/\"rev-41-abc\"");

  plan.set_apply_set("tenants/acme/prod");  // a tenant's set of the same name
  EXPECT_THAT(Apply(Write(RenderJson(plan))).errors, ElementsAre());
}

TEST_F(PlanFile, APlanOfAnotherSetOrNoPlanIsRefusedHere) {
  v1::ApplyPlan plan;
  plan.set_apply_set("platform/staging");
  plan.set_plan_etag("e1");
  const std::string other = Write(RenderJson(plan));
  EXPECT_THAT(Apply(other).errors,
              ElementsAre("--plan " + other + ": the plan is for apply set platform/staging, not prod"));
  plan.set_apply_set("platform/prod");
  plan.clear_plan_etag();
  const std::string no_etag = Write(RenderJson(plan));
  EXPECT_THAT(Apply(no_etag).errors, ElementsAre("--plan " + no_etag + ": the plan has no plan_etag"));
  const std::string yaml = Write(RenderYaml(plan));
  ASSERT_EQ(Apply(yaml).errors.size(), 1u);
  EXPECT_TRUE(Apply(yaml).errors[0].starts_with("--plan " + yaml + ": malformed JSON at line 1"))
      << Apply(yaml).errors[0];
  const std::string not_a_plan = Write(R"({"apply_set": "platform/prod", "etag": "x"})");
  EXPECT_TRUE(Apply(not_a_plan).errors[0].starts_with("--plan " + not_a_plan + ": not a plan of septactl diff -o json"))
      << Apply(not_a_plan).errors[0];
  EXPECT_THAT(Apply((dir_ / "missing.json").string()).errors,
              ElementsAre("--plan: cannot read " + (dir_ / "missing.json").string() + ": No such file or directory"));
}

v1::ApplyPlan PlanOf(int creates, int updates, int deletes, int conflicts, int refused, bool applied = false) {
  v1::ApplyPlan plan;
  auto& s = *plan.mutable_summary();
  s.set_creates(creates);
  s.set_updates(updates);
  s.set_deletes(deletes);
  s.set_unchanged(7);
  s.set_conflicts(conflicts);
  s.set_refused(refused);
  plan.set_applied(applied);
  return plan;
}

TEST(ExitCode, DiffSaysInSyncChangesOrNotApplicable) {
  EXPECT_EQ(DiffExitCode(PlanOf(0, 0, 0, 0, 0)), kExitInSync);
  EXPECT_EQ(DiffExitCode(PlanOf(1, 0, 0, 0, 0)), kExitChanges);
  EXPECT_EQ(DiffExitCode(PlanOf(0, 2, 0, 0, 0)), kExitChanges);
  EXPECT_EQ(DiffExitCode(PlanOf(0, 0, 1, 0, 0)), kExitChanges);
  EXPECT_EQ(DiffExitCode(PlanOf(1, 1, 1, 1, 0)), kExitNotApplicable);
  EXPECT_EQ(DiffExitCode(PlanOf(0, 0, 0, 0, 1)), kExitNotApplicable);
  EXPECT_EQ(kExitInSync, 0);
  EXPECT_EQ(kExitChanges, 1);
  EXPECT_EQ(kExitError, 2);
  EXPECT_EQ(kExitNotApplicable, 3);
  EXPECT_EQ(kExitWaitTimedOut, 4);
}

TEST(ExitCode, ApplySaysChangedOnlyWhenAsked) {
  EXPECT_EQ(ApplyExitCode(PlanOf(1, 0, 0, 0, 0, true), false), kExitInSync);
  EXPECT_EQ(ApplyExitCode(PlanOf(1, 0, 0, 0, 0, true), true), kExitChanges);
  EXPECT_EQ(ApplyExitCode(PlanOf(0, 0, 1, 0, 0, true), true), kExitChanges);
  EXPECT_EQ(ApplyExitCode(PlanOf(0, 0, 0, 0, 0, true), true), kExitInSync);   // nothing to do
  EXPECT_EQ(ApplyExitCode(PlanOf(0, 0, 0, 0, 0, false), true), kExitInSync);  // a no-op, not committed
  EXPECT_EQ(ApplyExitCode(PlanOf(1, 0, 0, 1, 0, false), false), kExitNotApplicable);
}

// A failed call as septad answers it: the code, a message and, in the
// details, a google.rpc.BadRequest naming the fields.
grpc::Status Failure(grpc::StatusCode code, const std::string& message,
                     const std::vector<std::pair<std::string, std::string>>& violations = {}) {
  google::rpc::BadRequest bad_request;
  for (const auto& [field, description] : violations) {
    auto* violation = bad_request.add_field_violations();
    violation->set_field(field);
    violation->set_description(description);
  }
  google::rpc::Status details;
  details.set_code(code);
  details.set_message(message);
  if (!violations.empty()) details.add_details()->PackFrom(bad_request);
  return grpc::Status(code, message, details.SerializeAsString());
}

TEST(ExitCode, AFailedCallIsARefusalOrAnError) {
  using grpc::StatusCode;
  for (const StatusCode code : {StatusCode::FAILED_PRECONDITION, StatusCode::ABORTED, StatusCode::RESOURCE_EXHAUSTED,
                                StatusCode::ALREADY_EXISTS}) {
    EXPECT_EQ(FailureExitCode(Failure(code, "refused")), kExitNotApplicable) << code;
  }
  for (const StatusCode code : {StatusCode::INVALID_ARGUMENT, StatusCode::PERMISSION_DENIED}) {
    EXPECT_EQ(FailureExitCode(Failure(code, "bad", {{"objects[2].capacity", "no"}})), kExitNotApplicable) << code;
    EXPECT_EQ(FailureExitCode(Failure(code, "bad", {{"apply_set", "not a DNS label"}})), kExitError) << code;
    EXPECT_EQ(FailureExitCode(Failure(code, "bad")), kExitError) << code;
  }
  for (const StatusCode code : {StatusCode::UNAVAILABLE, StatusCode::INTERNAL, StatusCode::UNAUTHENTICATED,
                                StatusCode::DEADLINE_EXCEEDED, StatusCode::UNIMPLEMENTED, StatusCode::NOT_FOUND}) {
    EXPECT_EQ(FailureExitCode(Failure(code, "failed")), kExitError) << code;
  }
}

TEST(FailureLines, EachViolationIsToldByTheDocumentOfItsObject) {
  std::istringstream in(kDocuments);
  ApplySetOptions options = FromStdin();
  options.apply_set = "prod";
  const PreparedApply prepared = PrepareDiff(DiffCommand{options}, &in);
  ASSERT_THAT(prepared.errors, ElementsAre());
  const grpc::Status refused = Failure(grpc::StatusCode::RESOURCE_EXHAUSTED, "2 objects refused",
                                       {{"objects[1].capacity.mig[0]", "2 x 3g.40gb do not fit: 1 free"},
                                        {"objects[0]", "owned by platform/other: pass --force-conflicts"},
                                        {"objects[7].quota", "an index the request does not have"},
                                        {"confirm_deletions[0]", "no such tenant"}});
  EXPECT_EQ(FailureLines(refused, "septad:9090", prepared.places),
            "septactl: RESOURCE_EXHAUSTED: 2 objects refused\n"
            "  <stdin> document 2 (VirtualCluster acme/train): capacity.mig[0]: 2 x 3g.40gb do not fit: 1 free\n"
            "  <stdin> document 1 (Tenant acme): owned by platform/other: pass --force-conflicts\n"
            "  objects[7].quota: an index the request does not have\n"
            "  confirm_deletions[0]: no such tenant\n");
  EXPECT_EQ(FailureLines(grpc::Status(grpc::StatusCode::UNAVAILABLE, "connect failed"), "septad:9090", {}),
            "septactl: UNAVAILABLE: cannot reach septad at septad:9090: connect failed\n");
}

v1::ApplySet DriftedSet() {
  v1::ApplySet set;
  set.set_name("applysets/prod");
  set.set_revision(3);
  set.set_applied_by("admin");
  set.set_members(2);
  set.set_sync_status(v1::ApplySet::OUT_OF_SYNC);
  auto* member = set.add_drifted();
  member->set_kind("VirtualCluster");
  member->set_name("tenants/acme/vclusters/train");
  member->mutable_drift()->set_principal("tenant:acme");
  member->mutable_drift()->set_action("applyset.drift");
  member->mutable_drift()->set_surface("rest");
  member->mutable_drift()->set_detail("vcluster.update changed quota.pods");
  member->mutable_drift()->set_audit_id(42);
  member->mutable_drift()->set_request_id("r-1");
  return set;
}

TEST(ShowApplySet, TheSetThenEachMemberChangedOutsideIt) {
  EXPECT_EQ(ShowApplySet(DriftedSet(), OutputFormat::kTable),
            "NAME             REVISION   MEMBERS   ON DRIFT   SYNC          APPLIED BY   APPLIED   SOURCE\n"
            "applysets/prod   3          2         report     OUT_OF_SYNC   admin        -         -\n"
            "\n"
            "CHANGED OUTSIDE THE SET        KIND             BY            VIA    AT   ACTION           AUDIT ID   "
            "REQUEST ID   WHAT\n"
            "tenants/acme/vclusters/train   VirtualCluster   tenant:acme   rest   -    applyset.drift   42         r-1"
            "          vcluster.update changed quota.pods\n");
  v1::ApplySet synced = DriftedSet();
  synced.clear_drifted();
  synced.set_sync_status(v1::ApplySet::SYNCED);
  const std::string table = ShowApplySet(synced, OutputFormat::kTable);
  EXPECT_EQ(std::count(table.begin(), table.end(), '\n'), 2) << "no drift table: " << table;
  EXPECT_NE(table.find(" SYNCED "), std::string::npos) << table;

  const std::string json = ShowApplySet(DriftedSet(), OutputFormat::kJson);
  EXPECT_NE(json.find("\"sync_status\": \"OUT_OF_SYNC\""), std::string::npos) << json;
  EXPECT_NE(json.find("\"audit_id\": \"42\""), std::string::npos) << json;
  EXPECT_NE(ShowApplySet(DriftedSet(), OutputFormat::kYaml).find("request_id: r-1"), std::string::npos);
}

TEST(ShowApplySets, AListHasNoSyncColumn) {
  v1::ListApplySetsResponse sets;
  *sets.add_apply_sets() = DriftedSet();
  sets.mutable_apply_sets(0)->clear_drifted();
  sets.mutable_apply_sets(0)->clear_sync_status();
  EXPECT_EQ(ShowApplySets(sets, OutputFormat::kTable),
            "NAME             REVISION   MEMBERS   ON DRIFT   APPLIED BY   APPLIED   SOURCE\n"
            "applysets/prod   3          2         report     admin        -         -\n");
  EXPECT_EQ(ShowApplySets(v1::ListApplySetsResponse(), OutputFormat::kTable),
            "NAME   REVISION   MEMBERS   ON DRIFT   APPLIED BY   APPLIED   SOURCE\n");
}

}  // namespace
}  // namespace septa::cli
