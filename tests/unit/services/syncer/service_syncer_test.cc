// A virtual cluster's services on the host, against real parts: copied with
// a selector that picks its pods' host pods, the host's cluster IP given to
// the virtual service, deletions carried down, external IPs refused, a
// recreation that a stopped syncer interrupted finished by the next one,
// and a selector-less service's endpoints copied when they lead to the
// tenant's own pods only.
#include <gtest/gtest.h>

#include "tenancy/sync/bookkeeping.h"
#include "tenancy/sync/host_endpoints.h"
#include "tenancy/sync/host_services.h"
#include "tests/unit/services/syncer/syncer_fixture.h"

namespace septa::syncer::testing {
namespace {

namespace tsync = tenancy::sync;

class SyncerServicesTest : public SyncerFixture {
 protected:
  static json Service(const std::string& name, json spec_extra = json::object()) {
    json spec = {{"selector", {{"app", name}}}, {"ports", {{{"name", "http"}, {"port", 80}, {"targetPort", 8080}}}}};
    spec.update(spec_extra);
    return {{"apiVersion", "v1"},
            {"kind", "Service"},
            {"metadata", {{"name", name}, {"namespace", "default"}}},
            {"spec", std::move(spec)}};
  }
  std::optional<json> VirtualService(const std::string& name) {
    auto got = virtual_->Get(kube::kServices, "default", name);
    return got.ok() ? std::optional<json>(*std::move(got)) : std::nullopt;
  }
  std::optional<json> HostService(const std::string& name) {
    auto got = host_->Get(kube::kServices, HostNamespace(), HostName(name));
    return got.ok() ? std::optional<json>(*std::move(got)) : std::nullopt;
  }
  static std::string ClusterIp(const std::optional<json>& service) {
    return service ? tsync::StringField(*service, "spec", "clusterIP") : "";
  }
  // Synced: the host copy records the virtual service as it is, and both have the host's address.
  bool Synced(const std::string& name) {
    auto host = HostService(name);
    auto virtual_service = VirtualService(name);
    if (!host || !virtual_service || ClusterIp(host).empty()) return false;
    auto ref = tsync::VirtualRefOf(*host, kTenant, kVcluster);
    return ref && ref->uid == tsync::StringField(*virtual_service, "metadata", "uid") &&
           ClusterIp(virtual_service) == ClusterIp(host) &&
           tsync::MetadataMapString(*host, "annotations", tsync::kServiceRecreateAnnotation).empty();
  }
};

// Each watch costs about 400 KiB: a virtual cluster without pods keeps none
// on its services (a service reaches nothing without pods).
TEST_F(SyncerServicesTest, AServiceIsOnTheHostOnceTheVirtualClusterHasAPodAndHasTheHostsAddress) {
  auto created = virtual_->Create(kube::kServices, "default", Service("web"));
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  const std::string first_ip = ClusterIp(*created);
  ASSERT_TRUE(syncer_->AwaitIdle(10s));
  auto cluster = syncer_->watches().Find({kTenant, kVcluster});
  ASSERT_NE(cluster, nullptr);
  EXPECT_FALSE(cluster->WatchesObjects(kube::kServices));
  EXPECT_FALSE(HostService("web").has_value());

  RunningPod("web");
  ASSERT_TRUE(Eventually([&] { return Synced("web"); })) << "host: " << HostService("web").value_or(json()).dump()
                                                         << "\nvirtual: " << VirtualService("web").value_or(json());
  EXPECT_TRUE(cluster->WatchesObjects(kube::kServices));
  const json host = *HostService("web");
  const json virtual_service = *VirtualService("web");
  // The host's address is authoritative: where it differed, the tenant's
  // service was given it by two updates (never deleted: its UID is kept).
  EXPECT_EQ(virtual_service["metadata"]["uid"], (*created)["metadata"]["uid"]);
  if (ClusterIp(host) != first_ip) {
    EXPECT_GT(std::stol(virtual_service["metadata"].value("resourceVersion", "0")),
              std::stol((*created)["metadata"].value("resourceVersion", "0")));
  }
  EXPECT_EQ(virtual_service["spec"]["type"], "ClusterIP");
  EXPECT_EQ(virtual_service["spec"]["selector"], json({{"app", "web"}}));
  EXPECT_EQ(virtual_service["spec"]["ports"][0]["targetPort"], 8080);
  EXPECT_EQ(host["spec"]["ports"][0]["port"], 80);
  EXPECT_EQ(host["spec"]["ports"][0]["targetPort"], 8080);

  // The host selector picks the pod's host pod, and no other virtual cluster's.
  auto host_pod = HostPod("web");
  ASSERT_TRUE(host_pod.has_value());
  const json labels = (*host_pod)["metadata"]["labels"];
  for (const auto& [key, value] : host["spec"]["selector"].items()) {
    EXPECT_EQ(labels.value(key, ""), value) << key;
  }
  EXPECT_EQ(host["spec"]["selector"].value(std::string(tsync::kTenantLabel), ""), kTenant);
  EXPECT_EQ(host["spec"]["selector"].value(std::string(tsync::kVclusterLabel), ""), kVcluster);
  EXPECT_EQ(host["spec"]["selector"].value(std::string(tsync::kVirtualNamespaceLabel), ""), "default");

  // Converged: looking again writes nothing.
  ASSERT_TRUE(syncer_->AwaitIdle(10s));
  const std::string host_version = (*HostService("web"))["metadata"]["resourceVersion"];
  const std::string virtual_version = (*VirtualService("web"))["metadata"]["resourceVersion"];
  syncer_->VirtualClusterChanged(std::string(kTenant) + "/" + kVcluster);
  ASSERT_TRUE(syncer_->AwaitIdle(10s));
  EXPECT_EQ((*HostService("web"))["metadata"]["resourceVersion"], host_version);
  EXPECT_EQ((*VirtualService("web"))["metadata"]["resourceVersion"], virtual_version);
}

TEST_F(SyncerServicesTest, ChangesAndDeletionsOfTheVirtualServiceReachTheHost) {
  RunningPod("web");
  ASSERT_TRUE(virtual_->Create(kube::kServices, "default", Service("web")).ok());
  // Settled first: under load the first sync may replace the host copy before it keeps one address.
  ASSERT_TRUE(Eventually([&] { return Synced("web") && !ClusterIp(HostService("web")).empty(); }));
  ASSERT_TRUE(syncer_->AwaitIdle(10s));
  const std::string host_ip = ClusterIp(HostService("web"));
  ASSERT_FALSE(host_ip.empty());

  json changed = *VirtualService("web");
  changed["spec"]["ports"][0]["targetPort"] = 9090;
  ASSERT_TRUE(virtual_->Update(kube::kServices, "default", changed).ok());
  ASSERT_TRUE(Eventually([&] {
    auto host = HostService("web");
    return host && (*host)["spec"]["ports"][0].value("targetPort", 0) == 9090;
  }));
  EXPECT_EQ(ClusterIp(HostService("web")), host_ip) << "updated in place, its address kept";

  ASSERT_TRUE(virtual_->Delete(kube::kServices, "default", "web").ok());
  ASSERT_TRUE(Eventually([&] { return !HostService("web").has_value(); }));
  ASSERT_TRUE(syncer_->AwaitIdle(10s));
  EXPECT_FALSE(VirtualService("web").has_value()) << "a service the tenant deleted stays deleted";
}

TEST_F(SyncerServicesTest, AServiceClaimingExternalIpsIsRefusedWithAnEventAndNotCopied) {
  RunningPod("web");
  ASSERT_TRUE(virtual_->Create(kube::kServices, "default", Service("mitm", {{"externalIPs", {"10.0.0.53"}}})).ok());
  ASSERT_TRUE(Eventually([&] { return HasRefusalEvent(*virtual_, "Service", "mitm", "spec.externalIPs"); }));
  ASSERT_TRUE(syncer_->AwaitIdle(10s));
  EXPECT_FALSE(HostService("mitm").has_value());
}

// A service without a selector reaches what the tenant's Endpoints of its
// name say: copied to the host pointing at the host pods with those IPs;
// an address that is none of the virtual cluster's pods is refused.
TEST_F(SyncerServicesTest, TheEndpointsOfAServiceWithoutASelectorLeadToTheTenantsOwnPodsOnly) {
  RunningPod("db");
  ASSERT_TRUE(Eventually([&] { return !tsync::StringField(*VirtualPod("db"), "status", "podIP").empty(); }));
  const std::string pod_ip = tsync::StringField(*VirtualPod("db"), "status", "podIP");
  json service = Service("db");
  service["spec"].erase("selector");
  ASSERT_TRUE(virtual_->Create(kube::kServices, "default", service).ok());
  auto endpoints_with = [](const json& addresses) {
    return json{{"apiVersion", "v1"},
                {"kind", "Endpoints"},
                {"metadata", {{"name", "db"}, {"namespace", "default"}}},
                {"subsets", {{{"addresses", addresses}, {"ports", {{{"name", "http"}, {"port", 8080}}}}}}}};
  };
  ASSERT_TRUE(virtual_->Create(kube::kEndpoints, "default", endpoints_with({{{"ip", pod_ip}}})).ok());
  auto host_endpoints = [&]() -> std::optional<json> {
    auto got = host_->Get(kube::kEndpoints, HostNamespace(), HostName("db"));
    return got.ok() ? std::optional<json>(*std::move(got)) : std::nullopt;
  };
  ASSERT_TRUE(Eventually([&] { return Synced("db") && host_endpoints().has_value(); }))
      << "host: " << host_endpoints().value_or(json()).dump();
  EXPECT_FALSE(HostService("db").value()["spec"].contains("selector"));
  const json address = (*host_endpoints())["subsets"][0]["addresses"][0];
  EXPECT_EQ(address["ip"], pod_ip);
  EXPECT_EQ(address["targetRef"], json({{"kind", "Pod"}, {"namespace", HostNamespace()}, {"name", HostName("db")}}));
  EXPECT_EQ((*host_endpoints())["subsets"][0]["ports"][0]["port"], 8080);

  // Pointed at the API server's address: refused, and the copy goes.
  json stolen = *virtual_->Get(kube::kEndpoints, "default", "db");
  stolen["subsets"][0]["addresses"].push_back({{"ip", "10.96.0.1"}});
  ASSERT_TRUE(virtual_->Update(kube::kEndpoints, "default", stolen).ok());
  ASSERT_TRUE(Eventually([&] {
    return HasRefusalEvent(*virtual_, "Endpoints", "db", "subsets[0].addresses[1].ip") && !host_endpoints();
  }));

  // Back to its own pod, then the service goes and its endpoints' copy with it.
  json own = *virtual_->Get(kube::kEndpoints, "default", "db");
  own["subsets"] = endpoints_with({{{"ip", pod_ip}}})["subsets"];
  ASSERT_TRUE(virtual_->Update(kube::kEndpoints, "default", own).ok());
  ASSERT_TRUE(Eventually([&] { return host_endpoints().has_value(); }));
  ASSERT_TRUE(virtual_->Delete(kube::kServices, "default", "db").ok());
  ASSERT_TRUE(Eventually([&] { return !host_endpoints() && !HostService("db"); }));
}

// A pod that finishes or starts terminating gives its IP back to the CNI,
// and the next pod to get it may be another tenant's (CVE-2021-25740 by IP
// reuse): the host Endpoints that lead to it go at once, refused as any
// address outside the virtual cluster, and come back when the tenant
// names live pods only.
TEST_F(SyncerServicesTest, EndpointsLeadingToAPodThatEndsOrTerminatesGo) {
  RunningPod("db");
  RunningPod("db2");
  ASSERT_TRUE(Eventually([&] {
    return !tsync::StringField(*VirtualPod("db"), "status", "podIP").empty() &&
           !tsync::StringField(*VirtualPod("db2"), "status", "podIP").empty();
  }));
  const std::string ip = tsync::StringField(*VirtualPod("db"), "status", "podIP");
  const std::string ip2 = tsync::StringField(*VirtualPod("db2"), "status", "podIP");
  json service = Service("db");
  service["spec"].erase("selector");
  ASSERT_TRUE(virtual_->Create(kube::kServices, "default", service).ok());
  json endpoints = {{"apiVersion", "v1"},
                    {"kind", "Endpoints"},
                    {"metadata", {{"name", "db"}, {"namespace", "default"}}},
                    {"subsets", {{{"addresses", {{{"ip", ip}}, {{"ip", ip2}}}}, {"ports", {{{"port", 5432}}}}}}}};
  ASSERT_TRUE(virtual_->Create(kube::kEndpoints, "default", endpoints).ok());
  auto host_endpoints = [&]() -> std::optional<json> {
    auto got = host_->Get(kube::kEndpoints, HostNamespace(), HostName("db"));
    return got.ok() ? std::optional<json>(*std::move(got)) : std::nullopt;
  };
  ASSERT_TRUE(Eventually([&] { return host_endpoints().has_value(); }));

  // db2's host pod starts terminating (a finalizer holds it).
  json held = *HostPod("db2");
  held["metadata"]["finalizers"] = json::array({"example.com/hold"});
  ASSERT_TRUE(host_->Update(kube::kPods, HostNamespace(), held).ok());
  ASSERT_TRUE(host_->Delete(kube::kPods, HostNamespace(), HostName("db2")).ok());
  EXPECT_TRUE(Eventually([&] {
    return !host_endpoints() && HasRefusalEvent(*virtual_, "Endpoints", "db", "subsets[0].addresses[1].ip");
  })) << "host: "
      << host_endpoints().value_or(json()).dump();

  // Named its live pod only: copied again. Then db's host pod exits, as the kubelet reports it.
  json own = *virtual_->Get(kube::kEndpoints, "default", "db");
  own["subsets"][0]["addresses"] = json::array({{{"ip", ip}}});
  ASSERT_TRUE(virtual_->Update(kube::kEndpoints, "default", own).ok());
  ASSERT_TRUE(Eventually([&] { return host_endpoints().has_value(); }));
  json exited = *HostPod("db");
  exited["status"]["phase"] = "Succeeded";
  kube::WriteOptions status;
  status.subresource = "status";
  ASSERT_TRUE(host_->Update(kube::kPods, HostNamespace(), exited, status).ok());
  EXPECT_TRUE(Eventually([&] { return !host_endpoints(); })) << "host: " << host_endpoints().value_or(json()).dump();
  held = *HostPod("db2");
  held["metadata"].erase("finalizers");
  ASSERT_TRUE(host_->Update(kube::kPods, HostNamespace(), held).ok());
}

// kill -9 between the two updates that give a virtual service the host's
// address: the host copy holds the service as it is to be, the virtual one
// is at the ExternalName marker, and the next syncer finishes (the same
// object, its UID kept). A service the tenant deleted meanwhile stays
// deleted, though its copy holds a record too: the syncer never deletes a
// virtual service, so one that is gone is the tenant's doing.
TEST_F(SyncerServicesTest, AReaddressingAStoppedSyncerLeftHalfDoneIsFinishedAndATenantsDeleteStands) {
  RunningPod("web");
  ASSERT_TRUE(virtual_->Create(kube::kServices, "default", Service("web")).ok());
  ASSERT_TRUE(virtual_->Create(kube::kServices, "default", Service("gone")).ok());
  ASSERT_TRUE(Eventually([&] { return Synced("web") && Synced("gone"); }));
  syncer_.reset();

  for (const char* name : {"web", "gone"}) {
    json host = *HostService(name);
    const json virtual_service = *VirtualService(name);
    host["metadata"]["annotations"][std::string(tsync::kServiceRecreateAnnotation)] = virtual_service.dump();
    ASSERT_TRUE(host_->Update(kube::kServices, HostNamespace(), host).ok());
  }
  const std::string web_uid = (*VirtualService("web"))["metadata"]["uid"];
  auto released = virtual_->Update(kube::kServices, "default", tsync::ReleasedService(*VirtualService("web")));
  ASSERT_TRUE(released.ok()) << released.status().ToString();
  EXPECT_FALSE((*released)["spec"].contains("clusterIP")) << "ExternalName frees the address";
  ASSERT_TRUE(virtual_->Delete(kube::kServices, "default", "gone").ok());

  StartSyncer();
  ASSERT_TRUE(Eventually([&] { return Synced("web"); })) << "host: " << HostService("web").value_or(json()).dump()
                                                         << "\nvirtual: " << VirtualService("web").value_or(json());
  const json web = *VirtualService("web");
  EXPECT_EQ(web["metadata"]["uid"], web_uid) << "updated, never deleted";
  EXPECT_EQ(web["spec"]["type"], "ClusterIP");
  EXPECT_EQ(web["spec"]["selector"], json({{"app", "web"}}));
  ASSERT_TRUE(Eventually([&] { return !HostService("gone").has_value(); }));
  ASSERT_TRUE(syncer_->AwaitIdle(10s));
  EXPECT_FALSE(VirtualService("gone").has_value()) << "the tenant's delete stands";
}

}  // namespace
}  // namespace septa::syncer::testing
