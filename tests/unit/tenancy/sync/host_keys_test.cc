// Which of a tenant's labels and annotations may reach a host copy
// (issue 28, H3 and M5), for every synced kind.
#include "tenancy/sync/host_keys.h"

#include <gtest/gtest.h>

#include "tenancy/sync/host_claims.h"
#include "tenancy/sync/host_endpoints.h"
#include "tenancy/sync/host_services.h"
#include "tenancy/sync/object_copies.h"
#include "tests/unit/tenancy/sync/sample_views.h"

namespace septa::tenancy::sync {
namespace {

using nlohmann::json;

TEST(SyncHostKeys, TheHostsKeysWhateverTheirDomainDepth) {
  for (const char* key : {"septa.dev/synced", "vcluster.septa.dev/x", "kai.scheduler/queue", "nvidia.com/gpu",
                          "gpu.nvidia.com/x", "gpu-fraction", "kubernetes.io/service-account.name",
                          "service.kubernetes.io/service-proxy-name", "endpointslice.kubernetes.io/skip-mirror"}) {
    EXPECT_TRUE(IsHostKey(key)) << key;
  }
  for (const char* key : {"app", "app.kubernetes.io/name", "notsepta.dev/x", "septa.dev.example.com/x",
                          "kubernetes.io/ingress.class", "gpu-fraction-x"}) {
    EXPECT_FALSE(IsHostKey(key)) << key;
  }
  EXPECT_TRUE(ReservedByValue("app.kubernetes.io/managed-by", "septa"));
  EXPECT_FALSE(ReservedByValue("app.kubernetes.io/managed-by", "Helm"));
  EXPECT_FALSE(ReservedByValue("app.kubernetes.io/name", "septa"));
}

// kubesim's dcgm-exporter reads a pod's simulation knobs (docs/kubesim.md):
// simulation.septa.dev/ is the one septa.dev domain a tenant may set, and
// Run:ai's fake-gpu-operator key was never the host's.
TEST(SyncHostKeys, SimulationKnobsReachTheHostPod) {
  EXPECT_FALSE(IsHostKey("simulation.septa.dev/gpu-memory-mib"));
  EXPECT_TRUE(CopiedToHost("simulation.septa.dev/gpu-memory-mib", "20480", {}));
  EXPECT_TRUE(CopiedToHost("run.ai/simulated-gpu-utilization", "10-30", {}));
  for (const char* key : {"x.simulation.septa.dev/y", "septa.dev/simulation", "simulation.septa.dev.example/x"}) {
    EXPECT_EQ(IsHostKey(key), std::string_view(key) != "simulation.septa.dev.example/x") << key;
  }
  VirtualClusterView view = SampleView(gpu::Tier::kDedicated);
  json pod = SamplePod("train", "1");
  pod["metadata"]["annotations"] = {{"simulation.septa.dev/gpu-memory-mib", "20480"},
                                    {"run.ai/simulated-gpu-utilization", "50"}};
  auto out = TranslatePodDown({}, view, pod, {});
  ASSERT_TRUE(std::holds_alternative<HostPod>(out)) << std::get<Refusal>(out).field;
  const json& annotations = std::get<HostPod>(out).object["metadata"]["annotations"];
  EXPECT_EQ(annotations["simulation.septa.dev/gpu-memory-mib"], "20480");
  EXPECT_EQ(annotations["run.ai/simulated-gpu-utilization"], "50");
}

TEST(SyncHostKeys, IntegrationsByDomainAndSubdomain) {
  EXPECT_EQ(IntegrationDomainOf("external-dns.alpha.kubernetes.io/hostname"), "external-dns.alpha.kubernetes.io");
  EXPECT_EQ(IntegrationDomainOf("nginx.ingress.kubernetes.io/rewrite-target"), "ingress.kubernetes.io");
  EXPECT_EQ(IntegrationDomainOf("sidecar.istio.io/inject"), "istio.io");
  EXPECT_EQ(IntegrationDomainOf("prometheus.io/scrape"), std::nullopt);
  EXPECT_EQ(IntegrationDomainOf("ingress"), std::nullopt);
  EXPECT_TRUE(IsIntegrationDomain("cert-manager.io"));
  EXPECT_FALSE(IsIntegrationDomain("acme.cert-manager.io")) << "configuration names the listed domains";
  EXPECT_FALSE(CopiedToHost("sidecar.istio.io/inject", "true", {}));
  EXPECT_TRUE(CopiedToHost("sidecar.istio.io/inject", "true", {"istio.io"}));
  EXPECT_FALSE(CopiedToHost("septa.dev/x", "1", {"istio.io"}));
  EXPECT_TRUE(CopiedToHost("app.kubernetes.io/managed-by", "Helm", {}));
}

TEST(SyncHostKeys, TheRefusalNamesTheKeyAndWhy) {
  const json meta = {{"labels", {{"app", "web"}}},
                     {"annotations", {{"external-dns.alpha.kubernetes.io/hostname", "api.platform.example.com"}}}};
  auto refusal = CheckTenantKeys(meta, {});
  ASSERT_TRUE(refusal);
  EXPECT_EQ(refusal->field, "metadata.annotations[external-dns.alpha.kubernetes.io/hostname]");
  EXPECT_NE(refusal->message.find("integration_keys"), std::string::npos) << refusal->message;
  EXPECT_EQ(CheckTenantKeys(meta, {"external-dns.alpha.kubernetes.io"}), std::nullopt);
  refusal = CheckTenantKeys({{"labels", {{"app.kubernetes.io/managed-by", "septa"}}}}, {});
  ASSERT_TRUE(refusal);
  EXPECT_EQ(refusal->field, "metadata.labels[app.kubernetes.io/managed-by]");
  EXPECT_EQ(CheckTenantKeys({{"annotations", {{"septa.dev/mig-profile", "1g.10gb"}}}}, {}, {"septa.dev/mig-profile"}),
            std::nullopt);
}

// Every synced kind refuses the host's keys, or keeps them off its copy.
TEST(SyncHostKeys, EveryKindOfCopy) {
  const VirtualClusterView view = SampleView(gpu::Tier::kShared);
  const json meta = {{"name", "web"},
                     {"namespace", "team"},
                     {"uid", "u1"},
                     {"labels", {{"app", "web"}, {"app.kubernetes.io/managed-by", "septa"}}},
                     {"annotations", {{"septa.dev/service-recreate", "{}"}}}};
  json service = {{"metadata", meta}, {"spec", {{"selector", {{"app", "web"}}}, {"ports", {{{"port", 80}}}}}}};
  auto host_service = HostService(view, service);
  ASSERT_TRUE(host_service.ok());
  ASSERT_TRUE(std::holds_alternative<Refusal>(*host_service));
  EXPECT_EQ(std::get<Refusal>(*host_service).field, "metadata.labels[app.kubernetes.io/managed-by]");

  auto endpoints = HostEndpoints(view, json{{"metadata", meta}}, {});
  ASSERT_TRUE(endpoints.ok());
  EXPECT_TRUE(std::holds_alternative<Refusal>(*endpoints));

  json claim = {{"metadata", meta}, {"spec", {{"accessModes", {"ReadWriteOnce"}}}}};
  auto host_claim = HostClaim(view, claim);
  ASSERT_TRUE(host_claim.ok());
  EXPECT_TRUE(std::holds_alternative<Refusal>(*host_claim));

  json secret = {{"metadata", meta}, {"type", "kubernetes.io/service-account-token"}, {"data", {{"token", "dA=="}}}};
  secret["metadata"]["annotations"]["kubernetes.io/service-account.name"] = "default";
  auto copy = HostCopy(CopiedKind::kSecret, view, secret);
  ASSERT_TRUE(copy.ok());
  EXPECT_EQ((*copy)["type"], "Opaque") << "the host's token controller would fill it";
  const json& labels = (*copy)["metadata"]["labels"];
  const json& annotations = (*copy)["metadata"]["annotations"];
  EXPECT_EQ(labels["app"], "web");
  EXPECT_FALSE(labels.contains("app.kubernetes.io/managed-by"));
  EXPECT_FALSE(annotations.contains("kubernetes.io/service-account.name"));
  EXPECT_FALSE(annotations.contains("septa.dev/service-recreate"));
  EXPECT_EQ(labels["septa.dev/synced"], "true") << "the bookkeeping is Septa's";
  EXPECT_EQ(annotations["septa.dev/copied-labels"], "app");
}

TEST(SyncHostKeys, AnExternalNameIntoTheClustersOwnDnsIsRefused) {
  const VirtualClusterView view = SampleView(gpu::Tier::kShared);
  for (const char* target : {"kubernetes.default.svc.cluster.local", "kubernetes.default.svc", "db.prod.svc.",
                             "10-0-0-1.kube-system.pod.cluster.local", "cluster.local", "x.Cluster.Local"}) {
    json service = {{"metadata", {{"name", "alias"}, {"namespace", "team"}, {"uid", "u"}}},
                    {"spec", {{"type", "ExternalName"}, {"externalName", target}}}};
    auto host = HostService(view, service);
    ASSERT_TRUE(host.ok());
    ASSERT_TRUE(std::holds_alternative<Refusal>(*host)) << target;
    EXPECT_EQ(std::get<Refusal>(*host).field, "spec.externalName");
  }
  json outside = {{"metadata", {{"name", "alias"}, {"namespace", "team"}, {"uid", "u"}}},
                  {"spec", {{"type", "ExternalName"}, {"externalName", "db.example.com"}}}};
  auto host = HostService(view, outside);
  ASSERT_TRUE(host.ok());
  EXPECT_TRUE(std::holds_alternative<json>(*host));
}

TEST(SyncHostKeys, APodWithTheHostsKeysIsRefusedAndItsInputsAreNotCopied) {
  VirtualClusterView view = SampleView(gpu::Tier::kIsolated);
  json pod = SamplePod("immortal", "1");
  pod["metadata"]["labels"] = {{"app.kubernetes.io/managed-by", "septa"}};
  auto out = TranslatePodDown({}, view, pod, {});
  ASSERT_TRUE(std::holds_alternative<Refusal>(out));
  EXPECT_EQ(std::get<Refusal>(out).field, "metadata.labels[app.kubernetes.io/managed-by]");

  pod["metadata"]["labels"] = {{"app", "train"}};
  pod["metadata"]["annotations"] = {{"septa.dev/mig-profile", "1g.10gb"}, {"sidecar.istio.io/inject", "true"}};
  out = TranslatePodDown({}, view, pod, {});
  ASSERT_TRUE(std::holds_alternative<Refusal>(out));
  EXPECT_EQ(std::get<Refusal>(out).field, "metadata.annotations[sidecar.istio.io/inject]");
  view.integration_domains = {"istio.io"};
  out = TranslatePodDown({}, view, pod, {});
  ASSERT_TRUE(std::holds_alternative<HostPod>(out));
  const json& annotations = std::get<HostPod>(out).object["metadata"]["annotations"];
  EXPECT_EQ(annotations["sidecar.istio.io/inject"], "true");
  EXPECT_FALSE(annotations.contains("septa.dev/mig-profile"));
}

}  // namespace
}  // namespace septa::tenancy::sync
