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

}  // namespace
}  // namespace septa::cli
