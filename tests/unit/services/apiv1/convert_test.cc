// VirtualCluster messages <-> tenancy records: the capacity kind that is set
// gives the tier, and what cannot be a capacity request is refused naming
// the field before any use case runs.
#include <gtest/gtest.h>

#include "services/apiv1/convert.h"
#include "services/apiv1/json.h"

namespace septa::apiv1 {
namespace {

std::string FieldOf(const Status& st) { return st.violations().empty() ? "" : st.violations()[0].field; }

v1::VirtualCluster Parsed(const std::string& body) {
  v1::VirtualCluster vc;
  const auto parsed = ParseJsonBody(body, vc);
  EXPECT_TRUE(parsed.ok()) << body << ": " << parsed.status().ToString();
  return vc;
}

TEST(VirtualClusterFromProto, TheKindThatIsSetGivesTheTierAndRoundTrips) {
  const std::vector<std::pair<std::string, gpu::Tier>> bodies = {
      {R"({"name":"a","capacity":{"shared":{"milli_gpu":1500,"gpu_memory_mib":20000}}})", gpu::Tier::kShared},
      {R"({"name":"a","capacity":{"mig":[{"profile":"3g.40gb","count":2},{"profile":"1g.10gb","count":4,"model":"H100-80GB"}]}})",
       gpu::Tier::kIsolated},
      {R"({"name":"a","capacity":{"gpus":{"model":"H100-80GB","count":2}}})", gpu::Tier::kDedicated},
      {R"({"name":"a","capacity":{"nodes":{"count":1}}})", gpu::Tier::kExclusive},
  };
  for (const auto& [body, tier] : bodies) {
    const v1::VirtualCluster in = Parsed(body);
    auto vc = VirtualClusterFromProto(in, /*require_capacity=*/true);
    ASSERT_TRUE(vc.ok()) << body << ": " << vc.status().ToString();
    EXPECT_EQ(vc->capacity.tier, tier) << body;
    const v1::VirtualCluster out = ToProto(core::VirtualClusterView{*vc, std::nullopt});
    EXPECT_EQ(out.capacity().SerializeAsString(), in.capacity().SerializeAsString()) << body;
    EXPECT_EQ(out.state(), v1::VirtualCluster::PROVISIONING);
    EXPECT_EQ(out.etag(), core::EtagOf(1));
  }
}

TEST(VirtualClusterFromProto, NoneOrSeveralKindsOrAZeroAmountNameTheField) {
  const std::vector<std::pair<std::string, std::string>> bodies = {
      {R"({"name":"a"})", "capacity"},
      {R"({"name":"a","capacity":{}})", "capacity"},
      {R"({"name":"a","capacity":{"gpus":{"count":1},"nodes":{"count":1}}})", "capacity"},
      {R"({"name":"a","capacity":{"shared":{"milli_gpu":1},"mig":[{"profile":"1g.10gb","count":1}]}})", "capacity"},
      {R"({"name":"a","capacity":{"gpus":{}}})", "capacity.gpus.count"},
      {R"({"name":"a","capacity":{"nodes":{"model":"H100-80GB"}}})", "capacity.nodes.count"},
      {R"({"name":"a","capacity":{"shared":{"gpu_memory_mib":10}}})", "capacity.shared.milli_gpu"},
  };
  for (const auto& [body, field] : bodies) {
    auto vc = VirtualClusterFromProto(Parsed(body), /*require_capacity=*/true);
    ASSERT_FALSE(vc.ok()) << body;
    EXPECT_EQ(vc.status().code(), Code::kInvalidArgument) << body;
    EXPECT_EQ(FieldOf(vc.status()), field) << body;
  }
  // An update that leaves the capacity alone need not send one.
  EXPECT_TRUE(VirtualClusterFromProto(Parsed(R"({"display_name":"x"})"), /*require_capacity=*/false).ok());
}

TEST(MaskPaths, LowerCamelCaseBecomesProtoNames) {
  EXPECT_EQ(MaskPaths(*v1::VirtualCluster::descriptor(),
                      {"displayName", "capacity", "quota.cpuMilli", "queue.overQuotaWeight"}),
            (std::vector<std::string>{"display_name", "capacity", "quota.cpu_milli", "queue.over_quota_weight"}));
}

TEST(ParseJsonBody, InvalidUtf8AndNestedOverflowNameTheField) {
  v1::VirtualCluster vc;
  auto utf8 = ParseJsonBody("{\"name\":\"a\xff\"}", vc);
  ASSERT_FALSE(utf8.ok());
  EXPECT_EQ(FieldOf(utf8.status()), "name");
  auto big = ParseJsonBody(R"({"capacity":{"gpus":{"count":4294967296}}})", vc);
  ASSERT_FALSE(big.ok());
  EXPECT_EQ(FieldOf(big.status()), "capacity.gpus.count");
}

}  // namespace
}  // namespace septa::apiv1
