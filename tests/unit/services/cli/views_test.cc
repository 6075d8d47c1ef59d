#include "services/cli/views.h"

#include <gtest/gtest.h>

namespace septa::cli {
namespace {

v1::VirtualCluster Provisioning() {
  v1::VirtualCluster vc;
  vc.set_name("train");
  vc.set_tenant("acme");
  vc.set_state(v1::VirtualCluster::PROVISIONING);
  auto* mig = vc.mutable_capacity()->add_mig();
  mig->set_profile("3g.40gb");
  mig->set_count(2);
  mig->set_model("H100-80GB");
  for (int gpu : {0, 1}) {
    auto* held = vc.mutable_reservation()->add_mig();
    held->set_node("h100-0");
    held->set_gpu(gpu);
    held->set_profile("3g.40gb");
  }
  auto* reserved = vc.add_conditions();
  reserved->set_type("CapacityReady");
  reserved->set_status("True");
  reserved->set_reason("CapacityReserved");
  reserved->set_message("2 MIG instances held");
  auto* ready = vc.add_conditions();
  ready->set_type("Ready");
  ready->set_status("False");
  return vc;
}

TEST(VirtualClusterTable, SaysWhatIsAskedHeldAndWhy) {
  const Table table = VirtualClusterTable(AsList(Provisioning()));
  EXPECT_EQ(table.headers, (std::vector<std::string>{"NAME", "TENANT", "STATE", "CAPACITY", "RESERVED", "CONDITIONS"}));
  ASSERT_EQ(table.rows.size(), 1u);
  EXPECT_EQ(table.rows[0], (std::vector<std::string>{"train", "acme", "PROVISIONING", "2 x 3g.40gb@H100-80GB",
                                                     "2 x 3g.40gb on h100-0/0, h100-0/1",
                                                     "CapacityReady=True (CapacityReserved), Ready=False"}));
}

TEST(VirtualClusterTable, OtherKindsAndEmptyReservation) {
  v1::VirtualCluster vc;
  vc.set_state(v1::VirtualCluster::DELETING);
  vc.mutable_capacity()->mutable_gpus()->set_count(2);
  auto* gpu = vc.mutable_reservation()->add_gpus();
  gpu->set_node("a100-1");
  gpu->set_gpu(3);
  vc.mutable_reservation()->set_releasing(true);
  auto row = VirtualClusterTable(AsList(vc)).rows.at(0);
  EXPECT_EQ(row[3], "2 x any GPU");
  EXPECT_EQ(row[4], "1 x GPU on a100-1/3 (releasing)");
  EXPECT_EQ(row[5], "-");

  v1::VirtualCluster shared;
  shared.mutable_capacity()->mutable_shared()->set_milli_gpu(500);
  shared.mutable_capacity()->mutable_shared()->set_gpu_memory_mib(4096);
  row = VirtualClusterTable(AsList(shared)).rows.at(0);
  EXPECT_EQ(row[3], "500 milli-GPU 4096 MiB");
  EXPECT_EQ(row[4], "-");

  v1::VirtualCluster nodes;
  nodes.mutable_capacity()->mutable_nodes()->set_model("H100-80GB");
  nodes.mutable_capacity()->mutable_nodes()->set_count(1);
  nodes.mutable_reservation()->add_nodes("h100-0");
  row = VirtualClusterTable(AsList(nodes)).rows.at(0);
  EXPECT_EQ(row[3], "1 x H100-80GB node");
  EXPECT_EQ(row[4], "1 x node on h100-0");
}

TEST(DescribeCondition, ReasonAndMessageOrItsAbsence) {
  EXPECT_EQ(DescribeCondition(Provisioning(), "CapacityReady"),
            "CapacityReady=True (CapacityReserved: 2 MIG instances held)");
  EXPECT_EQ(DescribeCondition(Provisioning(), "Ready"), "Ready=False");
  EXPECT_EQ(DescribeCondition(v1::VirtualCluster(), "CapacityReady"), "no CapacityReady condition");
}

// Untrusted strings reach the terminal escaped (RenderTable's job).
TEST(VirtualClusterTable, ControlCharactersAreEscapedWhenRendered) {
  v1::VirtualCluster vc = Provisioning();
  vc.set_name("evil\x1b[2J");
  const std::string text = RenderTable(VirtualClusterTable(AsList(vc)));
  EXPECT_EQ(text.find('\x1b'), std::string::npos) << text;
}

v1::ApplySet OutOfSyncSet() {
  v1::ApplySet set;
  set.set_name("applysets/prod");
  set.set_revision(41);
  set.set_source("git@example.com:platform@3f9c2e1");
  set.set_applied_by("admin");
  set.mutable_apply_time()->set_seconds(1'800'000'000);
  set.set_members(17);
  set.set_sync_status(v1::ApplySet::OUT_OF_SYNC);
  auto* member = set.add_drifted();
  member->set_kind("Tenant");
  member->set_name("tenants/acme");
  v1::Drift& drift = *member->mutable_drift();
  drift.set_principal("tenant:acme");
  drift.mutable_time()->set_seconds(1'800'000'600);
  drift.set_action("applyset.drift");
  drift.set_audit_id(88213);
  drift.set_request_id("req-7f3a");
  drift.set_surface("portal");
  drift.set_detail("tenant.update changed display_name");
  return set;
}

TEST(MemberTable, TheMemberItsRoleTimesAndEtag) {
  v1::TenantMember member;
  member.set_tenant("acme");
  member.set_member("group:/eng/ml");
  member.set_role("editor");
  member.mutable_create_time()->set_seconds(1'800'000'000);
  member.set_etag("2");
  const Table table = MemberTable(AsList(member));
  EXPECT_EQ(table.headers, (std::vector<std::string>{"MEMBER", "ROLE", "CREATED", "UPDATED", "ETAG"}));
  ASSERT_EQ(table.rows.size(), 1u);
  EXPECT_EQ(table.rows[0], (std::vector<std::string>{"group:/eng/ml", "editor", "2027-01-15T08:00:00Z", "-", "2"}));
  // A name as some identity provider wrote it is printed, never obeyed.
  member.set_member("user:evil\x1b[2J");
  EXPECT_EQ(RenderTable(MemberTable(AsList(member))).find('\x1b'), std::string::npos);
}

TEST(ApplySetTable, TheLastApplyAndTheSyncStatusWhenChecked) {
  v1::ApplySet set = OutOfSyncSet();
  Table table = ApplySetTable(AsList(set), /*sync=*/true);
  EXPECT_EQ(table.headers, (std::vector<std::string>{"NAME", "REVISION", "MEMBERS", "ON DRIFT", "SYNC", "APPLIED BY",
                                                     "APPLIED", "SOURCE"}));
  ASSERT_EQ(table.rows.size(), 1u);
  EXPECT_EQ(table.rows[0], (std::vector<std::string>{"applysets/prod", "41", "17", "report", "OUT_OF_SYNC", "admin",
                                                     "2027-01-15T08:00:00Z", "git@example.com:platform@3f9c2e1"}));

  // A list does not check drift: no SYNC column; what is unset is "-".
  set.clear_sync_status();
  set.clear_source();
  set.clear_apply_time();
  set.mutable_policy()->set_on_drift(v1::ApplySetPolicy::LOCK);
  table = ApplySetTable(AsList(set), /*sync=*/false);
  EXPECT_EQ(table.headers,
            (std::vector<std::string>{"NAME", "REVISION", "MEMBERS", "ON DRIFT", "APPLIED BY", "APPLIED", "SOURCE"}));
  EXPECT_EQ(table.rows[0], (std::vector<std::string>{"applysets/prod", "41", "17", "lock", "admin", "-", "-"}));
  EXPECT_EQ(ApplySetTable(AsList(set), /*sync=*/true).rows[0][4], "-");
}

TEST(DriftedMemberTable, WhoChangedWhatWhenAndWhichRecord) {
  const Table table = DriftedMemberTable(OutOfSyncSet().drifted());
  EXPECT_EQ(table.headers, (std::vector<std::string>{"CHANGED OUTSIDE THE SET", "KIND", "BY", "VIA", "AT", "ACTION",
                                                     "AUDIT ID", "REQUEST ID", "WHAT"}));
  ASSERT_EQ(table.rows.size(), 1u);
  EXPECT_EQ(table.rows[0],
            (std::vector<std::string>{"tenants/acme", "Tenant", "tenant:acme", "portal", "2027-01-15T08:10:00Z",
                                      "applyset.drift", "88213", "req-7f3a", "tenant.update changed display_name"}));
}

}  // namespace
}  // namespace septa::cli
