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
