// Services' defaults and cluster IPs: the pure allocator, then through
// kubesim's HTTPS API as clients (and the syncer) see them.
#include "services/kubesim/service_ips.h"

#include <gtest/gtest.h>

#include "services/kube/client.h"
#include "services/kube/resources.h"
#include "services/kubesim/kubesim.h"
#include "tests/support/seeded_random.h"

namespace septa::kubesim {
namespace {

using nlohmann::json;

json WebService(const std::string& name, json spec_extra = json::object()) {
  json spec = {{"selector", {{"app", name}}}, {"ports", {{{"port", 80}}}}};
  spec.update(spec_extra);
  return {{"apiVersion", "v1"}, {"kind", "Service"}, {"metadata", {{"name", name}}}, {"spec", std::move(spec)}};
}

TEST(kubesimServiceIps, ParsesOnlyDottedQuads) {
  EXPECT_EQ(ParseIpv4("10.96.0.10"), (10u << 24) | (96u << 16) | 10u);
  EXPECT_EQ(ParseIpv4("255.255.255.255"), 0xffffffffu);
  for (const char* bad : {"", "10.96.0", "10.96.0.1.2", "10.96.0.256", "10.96.00.1", "10.96.0.1 ", "a.b.c.d", "None"}) {
    EXPECT_FALSE(ParseIpv4(bad)) << bad;
  }
}

TEST(kubesimServiceIps, DefaultsAServiceAsTheApiServerDoes) {
  json service = WebService("web", {{"ports", {{{"port", 80}}, {{"port", 53}, {"protocol", "UDP"}}}}});
  EXPECT_TRUE(DefaultAndValidateService(service).empty());
  EXPECT_EQ(service["spec"]["type"], "ClusterIP");
  EXPECT_EQ(service["spec"]["sessionAffinity"], "None");
  EXPECT_EQ(service["spec"]["ports"][0], json({{"port", 80}, {"protocol", "TCP"}, {"targetPort", 80}}));
  EXPECT_EQ(service["spec"]["ports"][1]["protocol"], "UDP");

  json no_ports = WebService("web", {{"ports", json::array()}});
  auto causes = DefaultAndValidateService(no_ports);
  ASSERT_EQ(causes.size(), 1u);
  EXPECT_EQ(causes[0].field, "spec.ports");
  json bad_port = WebService("web", {{"ports", {{{"port", 70000}}}}});
  causes = DefaultAndValidateService(bad_port);
  ASSERT_EQ(causes.size(), 1u);
  EXPECT_EQ(causes[0].field, "spec.ports[0].port");
  json bad_type = WebService("web", {{"type", "Tunnel"}});
  EXPECT_EQ(DefaultAndValidateService(bad_type).at(0).field, "spec.type");
  json external = {{"spec", {{"type", "ExternalName"}}}};
  EXPECT_EQ(DefaultAndValidateService(external).at(0).field, "spec.externalName");
  json headless = WebService("web", {{"clusterIP", "None"}, {"ports", json::array()}});
  EXPECT_TRUE(DefaultAndValidateService(headless).empty());
}

TEST(kubesimServiceIps, AllocatesFreeAddressesOfTheRangeAndHonoursAskedOnes) {
  SeededRandom random(7);
  std::set<std::uint32_t> used;
  for (int i = 0; i < 200; ++i) {
    json service = WebService("web");
    ASSERT_TRUE(AllocateClusterIp(service, used, random).empty());
    auto ips = ClusterIpsOf(service);
    ASSERT_EQ(ips.size(), 1u);
    EXPECT_EQ(ips[0] >> 20, ((10u << 24) | (96u << 16)) >> 20) << service["spec"]["clusterIP"];  // in 10.96.0.0/12
    EXPECT_TRUE(used.insert(ips[0]).second) << "handed out twice: " << service["spec"]["clusterIP"];
    EXPECT_EQ(service["spec"]["clusterIPs"], json::array({service["spec"]["clusterIP"]}));
    EXPECT_EQ(service["spec"]["ipFamilyPolicy"], "SingleStack");
  }

  json asked = WebService("web", {{"clusterIP", "10.96.7.7"}});
  EXPECT_TRUE(AllocateClusterIp(asked, used, random).empty());
  EXPECT_EQ(asked["spec"]["clusterIP"], "10.96.7.7");
  used.insert(*ParseIpv4("10.96.7.7"));
  json taken = WebService("web", {{"clusterIP", "10.96.7.7"}});
  auto causes = AllocateClusterIp(taken, used, random);
  ASSERT_EQ(causes.size(), 1u);
  EXPECT_EQ(causes[0].field, "spec.clusterIPs");
  EXPECT_NE(causes[0].message.find("provided IP is already allocated"), std::string::npos) << causes[0].message;
  json outside = WebService("web", {{"clusterIP", "192.168.0.1"}});
  causes = AllocateClusterIp(outside, used, random);
  ASSERT_EQ(causes.size(), 1u);
  EXPECT_NE(causes[0].message.find("The range of valid IPs is 10.96.0.0/12"), std::string::npos) << causes[0].message;
  json network = WebService("web", {{"clusterIP", "10.96.0.0"}});
  EXPECT_EQ(AllocateClusterIp(network, used, random).size(), 1u);
  json headless = WebService("web", {{"clusterIP", "None"}});
  EXPECT_TRUE(AllocateClusterIp(headless, used, random).empty());
  EXPECT_TRUE(ClusterIpsOf(headless).empty());
  json external = {{"spec", {{"type", "ExternalName"}, {"externalName", "db.example.com"}, {"clusterIP", "1.2.3.4"}}}};
  EXPECT_TRUE(AllocateClusterIp(external, used, random).empty());
  EXPECT_FALSE(external["spec"].contains("clusterIP"));
}

TEST(kubesimServiceIps, AnExhaustedRandomSourceStillFindsAFreeAddress) {
  ExhaustedRandom random;
  std::set<std::uint32_t> used = {*ParseIpv4("10.96.0.2")};
  json service = WebService("web");
  ASSERT_TRUE(AllocateClusterIp(service, used, random).empty());
  EXPECT_EQ(service["spec"]["clusterIP"], "10.96.0.3");
}

TEST(kubesimServiceIps, AnUpdateKeepsWhatItLeavesOutAndMayNotChangeTheAddress) {
  json current = WebService("web", {{"clusterIP", "10.96.0.9"},
                                    {"clusterIPs", {"10.96.0.9"}},
                                    {"type", "NodePort"},
                                    {"ports", {{{"port", 80}, {"nodePort", 30080}}}}});
  json proposed = WebService("web", {{"type", "NodePort"}, {"ports", {{{"port", 80}}, {{"port", 443}}}}});
  EXPECT_TRUE(KeepAllocatedServiceValues(current, proposed).empty());
  EXPECT_EQ(proposed["spec"]["clusterIP"], "10.96.0.9");
  EXPECT_EQ(proposed["spec"]["clusterIPs"], json::array({"10.96.0.9"}));
  EXPECT_EQ(proposed["spec"]["ports"][0]["nodePort"], 30080);
  EXPECT_FALSE(proposed["spec"]["ports"][1].contains("nodePort"));

  json moved = WebService("web", {{"clusterIP", "10.96.0.10"}});
  auto causes = KeepAllocatedServiceValues(current, moved);
  ASSERT_EQ(causes.size(), 1u);
  EXPECT_EQ(causes[0].field, "spec.clusterIPs[0]");
  EXPECT_NE(causes[0].message.find("may not change once set"), std::string::npos);
}

class kubesimServices : public ::testing::Test {
 protected:
  void SetUp() override {
    sim_ = std::make_unique<KubeSim>(KubeSimOptions{});
    ASSERT_TRUE(sim_->Start().ok());
    client_ = std::move(*kube::Client::Create(*kube::ParseKubeconfig(*sim_->AdminKubeconfig())));
  }
  std::unique_ptr<KubeSim> sim_;
  std::unique_ptr<kube::Client> client_;
};

TEST_F(kubesimServices, ACreatedServiceGetsAnAddressThatNoOtherHoldsUntilItIsDeleted) {
  auto web = client_->Create(kube::kServices, "default", WebService("web"));
  ASSERT_TRUE(web.ok()) << web.status().ToString();
  const std::string ip = (*web)["spec"]["clusterIP"];
  EXPECT_TRUE(ParseIpv4(ip)) << ip;
  EXPECT_EQ((*web)["spec"]["ports"][0]["targetPort"], 80);

  // The address is taken: asking for it is refused, in the API server's words.
  auto clash = client_->Create(kube::kServices, "default", WebService("clash", {{"clusterIP", ip}}));
  ASSERT_FALSE(clash.ok());
  EXPECT_EQ(clash.status().code(), Code::kInvalidArgument);
  EXPECT_NE(clash.status().message().find("provided IP is already allocated"), std::string::npos)
      << clash.status().ToString();

  // An update without the address keeps it; one that changes it is refused.
  json update = WebService("web", {{"ports", {{{"port", 8080}}}}});
  update["metadata"]["resourceVersion"] = (*web)["metadata"]["resourceVersion"];
  auto updated = client_->Update(kube::kServices, "default", update);
  ASSERT_TRUE(updated.ok()) << updated.status().ToString();
  EXPECT_EQ((*updated)["spec"]["clusterIP"], ip);
  const std::string other = ip == "10.96.0.2" ? "10.96.0.3" : "10.96.0.2";
  json moved = *updated;
  moved["spec"]["clusterIP"] = other;
  moved["spec"]["clusterIPs"] = {other};
  auto refused = client_->Update(kube::kServices, "default", moved);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("may not change once set"), std::string::npos)
      << refused.status().ToString();

  // Once it is deleted, a new service may ask for its address.
  ASSERT_TRUE(client_->Delete(kube::kServices, "default", "web").ok());
  auto reused = client_->Create(kube::kServices, "default", WebService("again", {{"clusterIP", ip}}));
  ASSERT_TRUE(reused.ok()) << reused.status().ToString();
  EXPECT_EQ((*reused)["spec"]["clusterIP"], ip);
}

// Through ExternalName and back, as kube-apiserver allows: the address is
// freed on the way there and the one asked for (if free) given on the way
// back; a taken one is refused.
TEST_F(kubesimServices, AServiceMovedToExternalNameAndBackChangesItsAddress) {
  auto web = client_->Create(kube::kServices, "default", WebService("web"));
  auto db = client_->Create(kube::kServices, "default", WebService("db"));
  ASSERT_TRUE(web.ok() && db.ok());
  const std::string old_ip = (*web)["spec"]["clusterIP"];
  json external = *web;
  external["spec"]["type"] = "ExternalName";
  external["spec"]["externalName"] = "web.example.com";
  auto released = client_->Update(kube::kServices, "default", external);
  ASSERT_TRUE(released.ok()) << released.status().ToString();
  EXPECT_FALSE((*released)["spec"].contains("clusterIP"));
  EXPECT_FALSE((*released)["spec"].contains("clusterIPs"));
  auto reused = client_->Create(kube::kServices, "default", WebService("reuse", {{"clusterIP", old_ip}}));
  ASSERT_TRUE(reused.ok()) << "the address was freed: " << reused.status().ToString();

  json back = *released;
  back["spec"]["type"] = "ClusterIP";
  back["spec"].erase("externalName");
  back["spec"]["clusterIP"] = (*db)["spec"]["clusterIP"];
  auto taken = client_->Update(kube::kServices, "default", back);
  ASSERT_FALSE(taken.ok());
  EXPECT_NE(taken.status().message().find("provided IP is already allocated"), std::string::npos)
      << taken.status().ToString();
  const std::string wanted =
      old_ip == "10.96.0.2" || (*db)["spec"]["clusterIP"] == "10.96.0.2" ? "10.96.7.7" : "10.96.0.2";
  back["spec"]["clusterIP"] = wanted;
  back["spec"]["clusterIPs"] = {wanted};
  auto given = client_->Update(kube::kServices, "default", back);
  ASSERT_TRUE(given.ok()) << given.status().ToString();
  EXPECT_EQ((*given)["spec"]["clusterIP"], wanted);
  EXPECT_EQ((*given)["metadata"]["uid"], (*web)["metadata"]["uid"]) << "the same object";
}

}  // namespace
}  // namespace septa::kubesim
