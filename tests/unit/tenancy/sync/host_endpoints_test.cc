// The endpoints of a selector-less service on the host: which services have
// the tenant's endpoints, the host copy (addresses pointed at the host pods
// that hold them), and the refusal of an address that is not the virtual
// cluster's.
#include "tenancy/sync/host_endpoints.h"

#include <gtest/gtest.h>

#include "tenancy/sync/bookkeeping.h"
#include "tests/unit/tenancy/sync/sample_views.h"

namespace septa::tenancy::sync {
namespace {

using nlohmann::json;

json VirtualEndpoints(json subsets) {
  return {{"apiVersion", "v1"},
          {"kind", "Endpoints"},
          {"metadata",
           {{"name", "db"},
            {"namespace", "team"},
            {"uid", "uid-db"},
            {"resourceVersion", "12"},
            {"labels", {{"app", "db"}}},
            {"annotations", {{"kubectl.kubernetes.io/last-applied-configuration", "{}"}}}}},
          {"subsets", std::move(subsets)}};
}

const std::map<std::string, std::string> kHostPods = {{"10.244.1.7", "db-0-x-team-x-train"},
                                                      {"10.244.2.9", "db-1-x-team-x-train"}};

TEST(SyncEndpoints, OnlyAServiceWithoutASelectorHasTheTenantsEndpoints) {
  EXPECT_TRUE(HasTenantEndpoints(json{{"spec", {{"ports", {{{"port", 5432}}}}}}}));
  EXPECT_TRUE(HasTenantEndpoints(json{{"spec", {{"selector", json::object()}}}}));
  EXPECT_FALSE(HasTenantEndpoints(json{{"spec", {{"selector", {{"app", "db"}}}}}}));
  EXPECT_FALSE(HasTenantEndpoints(json{{"spec", {{"type", "ExternalName"}, {"externalName", "db.example.com"}}}}));
}

TEST(SyncEndpoints, EachAddressLeadsToTheHostPodThatHoldsIt) {
  const VirtualClusterView view = SampleView(gpu::Tier::kShared);
  const json endpoints =
      VirtualEndpoints(json::array({{{"addresses",
                                      {{{"ip", "10.244.1.7"},
                                        {"hostname", "db-0"},
                                        {"nodeName", "tenant-says"},
                                        {"targetRef", {{"kind", "Pod"}, {"namespace", "team"}, {"name", "db-0"}}}}}},
                                     {"notReadyAddresses", {{{"ip", "10.244.2.9"}}}},
                                     {"ports", {{{"name", "pg"}, {"port", 5432}}}}}}));
  auto result = HostEndpoints(view, endpoints, kHostPods);
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  ASSERT_TRUE(std::holds_alternative<json>(*result));
  const json copy = std::get<json>(*result);
  EXPECT_EQ(copy["metadata"]["name"], "db-x-team-x-train");
  EXPECT_EQ(copy["metadata"]["namespace"], view.host_namespace);
  EXPECT_EQ(VirtualRefOf(copy, "acme", "train"), (VirtualRef{"team", "db", "uid-db"}));
  EXPECT_EQ(copy["metadata"]["annotations"][std::string(kVirtualKindAnnotation)], "Endpoints");
  EXPECT_FALSE(copy["metadata"]["annotations"].contains("kubectl.kubernetes.io/last-applied-configuration"));
  const json want_subsets = json::array(
      {{{"addresses",
         {{{"ip", "10.244.1.7"},
           {"hostname", "db-0"},
           {"targetRef", {{"kind", "Pod"}, {"namespace", view.host_namespace}, {"name", "db-0-x-team-x-train"}}}}}},
        {"notReadyAddresses",
         {{{"ip", "10.244.2.9"},
           {"targetRef", {{"kind", "Pod"}, {"namespace", view.host_namespace}, {"name", "db-1-x-team-x-train"}}}}}},
        {"ports", {{{"name", "pg"}, {"port", 5432}, {"protocol", "TCP"}}}}}});
  EXPECT_EQ(copy["subsets"], want_subsets);

  EXPECT_TRUE(EndpointsUpToDate(copy, copy));
  json moved = copy;
  moved["subsets"][0]["addresses"][0]["ip"] = "10.244.2.9";
  EXPECT_FALSE(EndpointsUpToDate(copy, moved));
  json relabelled = copy;
  relabelled["metadata"]["labels"]["app"] = "other";
  EXPECT_FALSE(EndpointsUpToDate(copy, relabelled));
  json read_back = copy;
  read_back["metadata"]["resourceVersion"] = "99";
  read_back["metadata"]["uid"] = "host-uid";
  EXPECT_TRUE(EndpointsUpToDate(copy, read_back)) << "what the API server assigns is not compared";

  auto empty = HostEndpoints(view, VirtualEndpoints(nullptr), kHostPods);
  ASSERT_TRUE(empty.ok());
  EXPECT_FALSE(std::get<json>(*empty).contains("subsets")) << "no addresses yet: an empty copy";
}

TEST(SyncEndpoints, AnAddressThatIsNotTheVirtualClustersIsRefusedNamingIt) {
  const VirtualClusterView view = SampleView(gpu::Tier::kShared);
  const json endpoints = VirtualEndpoints(
      json::array({{{"addresses", {{{"ip", "10.244.1.7"}}}}}, {{"notReadyAddresses", {{{"ip", "10.96.0.1"}}}}}}));
  auto result = HostEndpoints(view, endpoints, kHostPods);
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  ASSERT_TRUE(std::holds_alternative<Refusal>(*result));
  const Refusal refusal = std::get<Refusal>(*result);
  EXPECT_EQ(refusal.field, "subsets[1].notReadyAddresses[0].ip");
  EXPECT_NE(refusal.message.find("10.96.0.1"), std::string::npos) << refusal.message;
  EXPECT_NE(refusal.message.find("CVE-2021-25740"), std::string::npos) << refusal.message;
}

json HostPodAt(const std::string& name, const std::string& ip, const std::string& phase) {
  return {{"metadata", {{"name", name}, {"namespace", "septa-acme-x-train"}}},
          {"status", {{"phase", phase}, {"podIP", ip}, {"podIPs", {{{"ip", ip}}, {{"ip", "fd00::" + ip.substr(7)}}}}}}};
}

// A finished pod's IP goes back to the CNI's pool and may be another
// tenant's pod's next: only the pods that still hold theirs are addresses
// a host Endpoints may name (CVE-2021-25740 by IP reuse).
TEST(SyncEndpoints, OnlyPodsThatHoldTheirIpLeadAnywhere) {
  json deleting = HostPodAt("deleting", "10.244.4.4", "Running");
  deleting["metadata"]["deletionTimestamp"] = "2026-11-28T10:00:00Z";
  const std::vector<json> pods = {HostPodAt("running", "10.244.1.1", "Running"),
                                  HostPodAt("pending", "10.244.2.2", "Pending"),
                                  HostPodAt("done", "10.244.3.3", "Succeeded"),
                                  HostPodAt("failed", "10.244.5.5", "Failed"),
                                  deleting,
                                  {{"metadata", {{"name", "no-ip-yet"}}}, {"status", {{"phase", "Pending"}}}}};
  const std::map<std::string, std::string> want = {
      {"10.244.1.1", "running"}, {"fd00::1.1", "running"}, {"10.244.2.2", "pending"}, {"fd00::2.2", "pending"}};
  EXPECT_EQ(LivePodIps(pods), want);
  EXPECT_TRUE(HoldsItsIp(pods[0]));
  EXPECT_FALSE(HoldsItsIp(pods[2]));
  EXPECT_FALSE(HoldsItsIp(deleting));

  // The finished pod's IP is refused as any other address outside the cluster.
  auto result =
      HostEndpoints(SampleView(gpu::Tier::kShared),
                    VirtualEndpoints(json::array({{{"addresses", {{{"ip", "10.244.3.3"}}}}}})), LivePodIps(pods));
  ASSERT_TRUE(result.ok());
  ASSERT_TRUE(std::holds_alternative<Refusal>(*result));
  EXPECT_EQ(std::get<Refusal>(*result).field, "subsets[0].addresses[0].ip");
}

TEST(SyncEndpoints, AHostCopyNamesThePodsItLeadsTo) {
  const json endpoints = VirtualEndpoints(
      json::array({{{"addresses", {{{"ip", "10.244.1.7"}}}}}, {{"notReadyAddresses", {{{"ip", "10.244.2.9"}}}}}}));
  auto result = HostEndpoints(SampleView(gpu::Tier::kShared), endpoints, kHostPods);
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(PodsNamedBy(std::get<json>(*result)),
            (std::set<std::string>{"db-0-x-team-x-train", "db-1-x-team-x-train"}));
  EXPECT_TRUE(PodsNamedBy(json::object()).empty());
  EXPECT_TRUE(PodsNamedBy(json{{"subsets", "not a list"}}).empty());
}

TEST(SyncEndpoints, MalformedEndpointsAreErrorsNamingTheField) {
  const VirtualClusterView view = SampleView(gpu::Tier::kShared);
  json no_ip = VirtualEndpoints(json::array({{{"addresses", {{{"hostname", "db-0"}}}}}}));
  auto result = HostEndpoints(view, no_ip, kHostPods);
  EXPECT_EQ(result.status().code(), Code::kInvalidArgument);
  EXPECT_NE(result.status().message().find("subsets[0].addresses[0].ip"), std::string::npos);
  EXPECT_EQ(HostEndpoints(view, VirtualEndpoints("many"), kHostPods).status().code(), Code::kInvalidArgument);
  json nameless = VirtualEndpoints(json::array());
  nameless["metadata"].erase("uid");
  EXPECT_EQ(HostEndpoints(view, nameless, kHostPods).status().code(), Code::kInvalidArgument);
}

}  // namespace
}  // namespace septa::tenancy::sync
