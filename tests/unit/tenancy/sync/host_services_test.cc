// Services on the host: the host copy of a virtual service, when it is up
// to date, and the virtual service given the host's cluster IP.
#include "tenancy/sync/host_services.h"

#include <gtest/gtest.h>

#include "tenancy/sync/bookkeeping.h"
#include "tests/unit/tenancy/sync/sample_views.h"

namespace septa::tenancy::sync {
namespace {

using nlohmann::json;

json VirtualService(const std::string& name, json spec) {
  return {{"apiVersion", "v1"},
          {"kind", "Service"},
          {"metadata",
           {{"name", name},
            {"namespace", "team"},
            {"uid", "uid-" + name},
            {"resourceVersion", "41"},
            {"creationTimestamp", "2026-11-24T10:00:00Z"},
            {"labels", {{"app", name}}},
            {"annotations", {{"kubectl.kubernetes.io/last-applied-configuration", "{}"}, {"team", "ml"}}}}},
          {"spec", std::move(spec)}};
}

json Copy(const VirtualClusterView& view, const json& virtual_service) {
  auto result = HostService(view, virtual_service);
  EXPECT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_TRUE(std::holds_alternative<json>(*result));
  return std::get<json>(*result);
}

TEST(SyncServices, TheHostCopySelectsTheHostPodsOfItsNamespaceAndLeavesAddressesToTheHost) {
  VirtualClusterView view = SampleView(gpu::Tier::kShared);
  view.external_services = true;  // the tier may have NodePort services
  const json service =
      VirtualService("web", {{"type", "NodePort"},
                             {"clusterIP", "10.96.3.4"},
                             {"clusterIPs", {"10.96.3.4"}},
                             {"selector", {{"app", "web"}}},
                             {"sessionAffinity", "ClientIP"},
                             {"ports",
                              {{{"name", "http"}, {"port", 80}, {"targetPort", 8080}, {"nodePort", 30080}},
                               {{"name", "dns"}, {"port", 53}, {"protocol", "UDP"}}}}});
  const json copy = Copy(view, service);
  EXPECT_EQ(copy["metadata"]["name"], "web-x-team-x-train");
  EXPECT_EQ(copy["metadata"]["namespace"], view.host_namespace);
  EXPECT_EQ(VirtualRefOf(copy, "acme", "train"), (VirtualRef{"team", "web", "uid-web"}));
  EXPECT_EQ(copy["metadata"]["annotations"][std::string(kVirtualKindAnnotation)], "Service");
  EXPECT_FALSE(copy["metadata"]["annotations"].contains("kubectl.kubernetes.io/last-applied-configuration"));
  EXPECT_EQ(copy["metadata"]["annotations"]["team"], "ml");
  const json& spec = copy["spec"];
  // The labels every host pod of namespace team of acme/train carries.
  EXPECT_EQ(spec["selector"], json({{"app", "web"},
                                    {std::string(kTenantLabel), "acme"},
                                    {std::string(kVclusterLabel), "train"},
                                    {std::string(kVirtualNamespaceLabel), "team"}}));
  EXPECT_FALSE(spec.contains("clusterIP"));
  EXPECT_FALSE(spec.contains("clusterIPs"));
  EXPECT_EQ(spec["type"], "NodePort");
  EXPECT_EQ(spec["sessionAffinity"], "ClientIP");
  EXPECT_EQ(spec["ports"], json::array({{{"name", "http"}, {"port", 80}, {"targetPort", 8080}, {"protocol", "TCP"}},
                                        {{"name", "dns"}, {"port", 53}, {"protocol", "UDP"}, {"targetPort", 53}}}));
}

TEST(SyncServices, HeadlessExternalNameAndSelectorlessServicesKeepTheirShape) {
  const VirtualClusterView view = SampleView(gpu::Tier::kDedicated);
  const json headless = Copy(view, VirtualService("db", {{"clusterIP", "None"}, {"selector", {{"app", "db"}}}}));
  EXPECT_EQ(headless["spec"]["clusterIP"], "None");
  const json external =
      Copy(view, VirtualService("api", {{"type", "ExternalName"}, {"externalName", "api.example.com"}}));
  EXPECT_EQ(external["spec"]["externalName"], "api.example.com");
  EXPECT_FALSE(external["spec"].contains("ports"));
  EXPECT_FALSE(external["spec"].contains("selector"));
  const json manual = Copy(view, VirtualService("legacy", {{"ports", {{{"port", 5432}}}}}));
  EXPECT_FALSE(manual["spec"].contains("selector")) << "no selector: the host must not pick pods for it";
}

TEST(SyncServices, AServiceThatClaimsExternalIpsIsRefusedNotCopied) {
  auto result = HostService(SampleView(gpu::Tier::kShared),
                            VirtualService("mitm", {{"externalIPs", {"8.8.8.8"}}, {"ports", {{{"port", 53}}}}}));
  ASSERT_TRUE(result.ok());
  ASSERT_TRUE(std::holds_alternative<Refusal>(*result));
  EXPECT_EQ(std::get<Refusal>(*result).field, "spec.externalIPs");
  EXPECT_NE(std::get<Refusal>(*result).message.find("CVE-2020-8554"), std::string::npos);
}

TEST(SyncServices, NodePortAndLoadBalancerServicesAreRefusedUnlessTheTierAllowsThem) {
  for (const char* type : {"NodePort", "LoadBalancer"}) {
    const json service = VirtualService("web", {{"type", type}, {"ports", {{{"port", 80}}}}});
    auto result = HostService(SampleView(gpu::Tier::kExclusive), service);
    ASSERT_TRUE(result.ok());
    ASSERT_TRUE(std::holds_alternative<Refusal>(*result)) << type;
    EXPECT_EQ(std::get<Refusal>(*result).field, "spec.type");
    EXPECT_NE(std::get<Refusal>(*result).message.find(std::string(type) + " opens ports"), std::string::npos);
    EXPECT_NE(std::get<Refusal>(*result).message.find("trust tier exclusive"), std::string::npos);
    EXPECT_NE(std::get<Refusal>(*result).message.find("external_service_tiers"), std::string::npos);

    VirtualClusterView allowed = SampleView(gpu::Tier::kExclusive);
    allowed.external_services = true;
    EXPECT_EQ(Copy(allowed, service)["spec"]["type"], type);
  }
  for (const char* type : {"ClusterIP", "ExternalName"}) {
    json spec = {{"type", type}, {"ports", {{{"port", 80}}}}};
    if (std::string(type) == "ExternalName") spec = {{"type", type}, {"externalName", "db.example.com"}};
    EXPECT_EQ(Copy(SampleView(gpu::Tier::kShared), VirtualService("web", spec))["spec"]["type"], type);
  }
}

TEST(SyncServices, AServiceWithoutItsIdentityIsAnErrorNamingTheField) {
  json service = VirtualService("web", {{"ports", {{{"port", 80}}}}});
  service["metadata"].erase("uid");
  auto result = HostService(SampleView(gpu::Tier::kShared), service);
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.status().message().find("metadata.uid"), std::string::npos);
}

TEST(SyncServices, ACopyReadBackFromTheHostIsUpToDateUntilTheVirtualServiceChanges) {
  const VirtualClusterView view = SampleView(gpu::Tier::kShared);
  const json want = Copy(view, VirtualService("web", {{"selector", {{"app", "web"}}}, {"ports", {{{"port", 80}}}}}));
  // What the host's API server returns: its address, node ports, defaults, bookkeeping of its own.
  json read_back = want;
  read_back["metadata"]["uid"] = "host-uid";
  read_back["metadata"]["resourceVersion"] = "7";
  read_back["spec"]["clusterIP"] = "10.96.9.9";
  read_back["spec"]["clusterIPs"] = {"10.96.9.9"};
  read_back["spec"]["sessionAffinity"] = "None";
  read_back["spec"]["ports"][0]["nodePort"] = 31000;
  read_back["status"] = {{"loadBalancer", json::object()}};
  EXPECT_TRUE(ServiceUpToDate(want, read_back));

  const json moved = Copy(view, VirtualService("web", {{"selector", {{"app", "web2"}}}, {"ports", {{{"port", 80}}}}}));
  EXPECT_FALSE(ServiceUpToDate(moved, read_back));
  const json reported =
      Copy(view, VirtualService("web", {{"selector", {{"app", "web"}}}, {"ports", {{{"port", 8080}}}}}));
  EXPECT_FALSE(ServiceUpToDate(reported, read_back));
  json relabelled = VirtualService("web", {{"selector", {{"app", "web"}}}, {"ports", {{{"port", 80}}}}});
  relabelled["metadata"]["labels"]["tier"] = "frontend";
  EXPECT_FALSE(ServiceUpToDate(Copy(view, relabelled), read_back));
  json recreated = VirtualService("web", {{"selector", {{"app", "web"}}}, {"ports", {{{"port", 80}}}}});
  recreated["metadata"]["uid"] = "uid-web-2";
  EXPECT_FALSE(ServiceUpToDate(Copy(view, recreated), read_back)) << "the copy must record the new UID";

  EXPECT_TRUE(ServiceUpdatableInPlace(moved, read_back));
  const json headless = Copy(view, VirtualService("web", {{"clusterIP", "None"}, {"selector", {{"app", "web"}}}}));
  EXPECT_FALSE(ServiceUpdatableInPlace(headless, read_back));
  const json external = Copy(view, VirtualService("web", {{"type", "ExternalName"}, {"externalName", "a.example"}}));
  EXPECT_FALSE(ServiceUpdatableInPlace(external, read_back));
  EXPECT_FALSE(ServiceUpdatableInPlace(want, external));
}

TEST(SyncServices, TheVirtualServiceGoesThroughExternalNameToTheHostsAddress) {
  const json virtual_service = VirtualService("web", {{"type", "NodePort"},
                                                      {"clusterIP", "10.96.3.4"},
                                                      {"clusterIPs", {"10.96.3.4"}},
                                                      {"selector", {{"app", "web"}}},
                                                      {"sessionAffinity", "ClientIP"},
                                                      {"externalTrafficPolicy", "Local"},
                                                      {"ports", {{{"port", 80}, {"nodePort", 30080}}}}});
  json host_service = {{"spec", {{"clusterIP", "10.96.200.1"}, {"clusterIPs", {"10.96.200.1"}}}}};
  auto readdressed = VirtualServiceWithHostIp(virtual_service, host_service);
  ASSERT_TRUE(readdressed);
  EXPECT_EQ((*readdressed)["spec"]["clusterIP"], "10.96.200.1");
  EXPECT_EQ((*readdressed)["spec"]["clusterIPs"], json::array({"10.96.200.1"}));
  EXPECT_EQ((*readdressed)["spec"]["type"], "NodePort");
  EXPECT_EQ((*readdressed)["spec"]["selector"], virtual_service["spec"]["selector"]);
  EXPECT_EQ((*readdressed)["metadata"], virtual_service["metadata"]) << "the same object, updated";
  EXPECT_FALSE(Readdressing(virtual_service));

  // The first update: ExternalName at the marker, which frees the address
  // and keeps nothing an API server refuses there.
  const json released = ReleasedService(virtual_service);
  EXPECT_TRUE(Readdressing(released));
  EXPECT_EQ(released["spec"]["type"], "ExternalName");
  EXPECT_EQ(released["spec"]["externalName"], std::string(kReaddressingExternalName));
  for (const char* dropped : {"clusterIP", "clusterIPs", "sessionAffinity", "externalTrafficPolicy"}) {
    EXPECT_FALSE(released["spec"].contains(dropped)) << dropped;
  }
  EXPECT_FALSE(released["spec"]["ports"][0].contains("nodePort"));
  EXPECT_EQ(released["metadata"]["resourceVersion"], "41") << "a precondition";
  EXPECT_FALSE(Readdressing(VirtualService("db", {{"type", "ExternalName"}, {"externalName", "db.example.com"}})));

  json same = virtual_service;
  same["spec"]["clusterIP"] = "10.96.200.1";
  EXPECT_FALSE(VirtualServiceWithHostIp(same, host_service));
  EXPECT_FALSE(VirtualServiceWithHostIp(virtual_service, json{{"spec", json::object()}})) << "no host address yet";
  EXPECT_FALSE(
      VirtualServiceWithHostIp(VirtualService("db", {{"clusterIP", "None"}}), json{{"spec", {{"clusterIP", "None"}}}}));
}

TEST(SyncServices, TheHostsLoadBalancerStatusFlowsUp) {
  const json virtual_service = VirtualService("web", {{"type", "LoadBalancer"}});
  json host_service = {{"status", {{"loadBalancer", {{"ingress", {{{"ip", "203.0.113.7"}}}}}}}}};
  auto status = ServiceStatusUp(virtual_service, host_service);
  ASSERT_TRUE(status);
  EXPECT_EQ((*status)["loadBalancer"]["ingress"][0]["ip"], "203.0.113.7");
  json shown = virtual_service;
  shown["status"] = *status;
  EXPECT_FALSE(ServiceStatusUp(shown, host_service));
  EXPECT_FALSE(ServiceStatusUp(virtual_service, json{{"status", {{"loadBalancer", json::object()}}}}));
}

}  // namespace
}  // namespace septa::tenancy::sync
