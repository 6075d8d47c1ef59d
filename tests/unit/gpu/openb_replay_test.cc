#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "gpu/openb_csv.h"
#include "gpu/trace_replay.h"

namespace septa::gpu {
namespace {

std::string Fixture(const std::string& name) {
  std::ifstream in(std::string(SEPTA_OPENB_FIXTURES) + "/" + name);
  std::ostringstream text;
  text << in.rdbuf();
  EXPECT_FALSE(text.str().empty()) << name;
  return text.str();
}

std::vector<OpenbPod> ParsePods(const std::string& text) {
  auto pods = ParseOpenbPods(text, "pods.csv", Catalog::Default());
  EXPECT_TRUE(pods.ok()) << pods.status().ToString();
  return pods.ok() ? std::move(pods).value() : std::vector<OpenbPod>{};
}

TEST(OpenbCsv, ParsesNodesAndPods) {
  auto nodes = ParseOpenbNodes(Fixture("nodes.csv"), "nodes.csv", Catalog::Default());
  ASSERT_TRUE(nodes.ok()) << nodes.status().ToString();
  ASSERT_EQ(nodes->size(), 3u);
  EXPECT_EQ((*nodes)[0].name, "node-b");
  EXPECT_EQ((*nodes)[0].gpu_count, 2);
  EXPECT_EQ((*nodes)[0].model, "T4");
  EXPECT_EQ((*nodes)[2].gpu_count, 0);
  auto pods = ParsePods(Fixture("pods.csv"));
  ASSERT_EQ(pods.size(), 4u);
  EXPECT_EQ(pods[1].gpu_spec, std::vector<std::string>{"T4"});
  EXPECT_EQ(pods[2].num_gpu, 2);
  EXPECT_EQ(pods[3].gpu_milli, 0);
}

TEST(OpenbCsv, ErrorsNameFileLineAndColumn) {
  const Catalog& c = Catalog::Default();
  auto bad_number = ParseOpenbPods(Fixture("pods_bad_number.csv"), "pods_bad_number.csv", c);
  ASSERT_FALSE(bad_number.ok());
  EXPECT_EQ(bad_number.status().violations().at(0).field, "memory_mib");
  EXPECT_NE(bad_number.status().message().find("pods_bad_number.csv:3:3: 'lots' is not an integer"), std::string::npos)
      << bad_number.status().message();
  auto missing = ParseOpenbPods(Fixture("pods_missing_column.csv"), "pods_missing_column.csv", c);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("pods_missing_column.csv:1: missing column"), std::string::npos);
  EXPECT_EQ(missing.status().violations().at(0).field, "memory_mib");
  auto unknown = ParseOpenbPods(Fixture("pods_unknown_model.csv"), "pods_unknown_model.csv", c);
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find("pods_unknown_model.csv:2:6: unknown GPU model 'X9'"), std::string::npos)
      << unknown.status().message();
  auto bad_node = ParseOpenbNodes("sn,cpu_milli,memory_mib,gpu,model\nn1,1,1,2,Quantum\n", "n.csv", c);
  ASSERT_FALSE(bad_node.ok());
  EXPECT_NE(bad_node.status().message().find("n.csv:2:5: unknown GPU model 'Quantum'"), std::string::npos);
  EXPECT_FALSE(ParseOpenbPods("name,cpu_milli,memory_mib,num_gpu,gpu_milli\np,1,1,2,500\n", "m.csv", c).ok());
  EXPECT_FALSE(ParseOpenbPods("name,cpu_milli,memory_mib,num_gpu,gpu_milli\np,1,1,1\n", "short.csv", c).ok());
  EXPECT_FALSE(ParseOpenbPods("name,cpu_milli,memory_mib,num_gpu,gpu_milli\np,1,1,1,-5\n", "neg.csv", c).ok());
  EXPECT_FALSE(ParseOpenbPods("", "empty.csv", c).ok());
  EXPECT_FALSE(ParseOpenbPods("name,cpu_milli,memory_mib,num_gpu,gpu_milli\np,1,1,9,1000\n", "big.csv", c).ok());
}

ReplayInput Input() {
  auto nodes = ParseOpenbNodes(Fixture("nodes.csv"), "nodes.csv", Catalog::Default());
  auto pods = ParseOpenbPods(Fixture("pods.csv"), "pods.csv", Catalog::Default());
  auto input = BuildReplayInput(*nodes, *pods);
  EXPECT_TRUE(input.ok());
  return std::move(input).value();
}

TEST(Replay, ClusterLeavesOutCpuOnlyNodesAndSortsByName) {
  const ReplayInput in = Input();
  ASSERT_EQ(in.cluster.names, (std::vector<std::string>{"node-a", "node-b"}));
  EXPECT_EQ(in.cluster.total_gpu_milli, 3000);
  EXPECT_EQ(in.pods[1].model_mask, 1u << in.cluster.ModelIndex("T4"));
  EXPECT_EQ(in.pods[0].model_mask, kAnyModel);
}

TEST(Replay, ClonesUpToTheTargetAndShufflesBySeed) {
  const ReplayInput in = Input();
  const std::vector<int> order = ArrivalOrder(in, 42);
  long long requested = 0;
  std::vector<int> seen(in.pods.size(), 0);
  for (int i : order) {
    requested += in.pods[i].RequestedMilli();
    ++seen[i];
  }
  for (int count : seen) EXPECT_GE(count, 1);  // every trace pod arrives
  EXPECT_LE(requested, 1.3 * 3000 + 1000);
  EXPECT_GT(order.size(), in.pods.size());
  EXPECT_EQ(order, ArrivalOrder(in, 42));
  EXPECT_NE(order, ArrivalOrder(in, 43));
}

TEST(Replay, MeasuresAllocationAndFailures) {
  const ReplayInput in = Input();
  // BestFit puts pod-0's half GPU on node-a (less left over: raw 92 vs 79);
  // pod-1 must take a T4 of node-b, so pod-2's two whole GPUs no longer fit.
  auto policy = MakePolicy("bestfit", in.cluster, in.workload, 1);
  TraceReplay replay(in, {0, 1, 2, 3}, *policy);
  std::vector<int> nodes;
  while (!replay.done()) {
    const GpuPick pick = replay.Decide();
    nodes.push_back(pick.node);
    replay.Commit(pick);
  }
  EXPECT_EQ(nodes, (std::vector<int>{0, 1, -1, 0}));
  const ReplayMeasures m = replay.Measures();
  EXPECT_EQ(m.arrivals, 4);
  EXPECT_EQ(m.failed_pods, 1);
  EXPECT_NEAR(m.final_alloc_ratio, 100.0 * 1000 / 3000, 1e-9);
  EXPECT_EQ(replay.cluster().nodes[1].gpu_free[0], 500);
}

}  // namespace
}  // namespace septa::gpu
