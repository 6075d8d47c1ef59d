#include "tenancy/host/render.h"

#include <gtest/gtest.h>

#include "common/text.h"
#include "tenancy/host/names.h"
#include "tests/unit/tenancy/host/sample_inputs.h"

namespace septa::tenancy::host {
namespace {

using nlohmann::json;

SampleCase Case(std::string_view name) {
  for (SampleCase& c : SampleCases()) {
    if (c.name == name) return c;
  }
  ADD_FAILURE() << "no sample case " << name;
  return {};
}

HostObjects Render(const SampleCase& c, Scheduler scheduler = Scheduler::kDefault, RenderConfig config = {}) {
  config.scheduler = scheduler;
  auto rendered = RenderHostObjects(c.tier, c.vcluster, c.reservation, SampleNodes(), config);
  EXPECT_TRUE(rendered.ok()) << rendered.status().message();
  return rendered.ok() ? *rendered : HostObjects{};
}

json Find(const HostObjects& h, std::string_view kind, std::string_view name = "") {
  for (const json& o : h.objects) {
    if (o["kind"] == kind && (name.empty() || o["metadata"]["name"] == name)) return o;
  }
  ADD_FAILURE() << "no " << kind << " " << name;
  return json::object();
}

std::vector<std::string> Kinds(const HostObjects& h) {
  std::vector<std::string> kinds;
  for (const json& o : h.objects) kinds.push_back(o["kind"]);
  return kinds;
}

TEST(HostRender, ObjectsComeInApplyOrderPerScheduler) {
  const std::vector<std::string> base = {"Namespace",     "ResourceQuota",  "LimitRange", "NetworkPolicy",
                                         "NetworkPolicy", "ServiceAccount", "Role",       "RoleBinding"};
  const SampleCase c = Case("isolated");
  EXPECT_EQ(Kinds(Render(c)), base);
  auto kai = base;
  kai.insert(kai.end(), {"Queue", "Queue"});
  EXPECT_EQ(Kinds(Render(c, Scheduler::kKai)), kai);
  auto kueue = base;
  kueue.insert(kueue.end(), {"ResourceFlavor", "ResourceFlavor", "ResourceFlavor", "WorkloadPriorityClass",
                             "ClusterQueue", "LocalQueue"});
  EXPECT_EQ(Kinds(Render(c, Scheduler::kKueue)), kueue);
}

TEST(HostRender, EveryObjectIsLabelledAndValidlyNamed) {
  for (const SampleCase& c : SampleCases()) {
    const HostObjects h = Render(c, Scheduler::kKueue);
    EXPECT_EQ(h.host_namespace, HostNamespaceName(c.vcluster.tenant, c.vcluster.name));
    for (const json& o : h.objects) {
      const json& meta = o["metadata"];
      const std::string name = meta["name"];
      EXPECT_TRUE(IsDns1123Label(name)) << name;
      EXPECT_EQ(meta["labels"]["app.kubernetes.io/managed-by"], "septa") << name;
      if (meta["labels"].contains("septa.dev/shared")) {
        EXPECT_FALSE(meta["labels"].contains("septa.dev/tenant")) << name;
        continue;
      }
      EXPECT_EQ(meta["labels"]["septa.dev/tenant"], c.vcluster.tenant) << name;
      EXPECT_EQ(meta["labels"]["septa.dev/vcluster"], c.vcluster.name) << name;
      const bool cluster_scoped =
          o["kind"] == "Namespace" || o["kind"] == "ClusterQueue" || o["kind"] == "WorkloadPriorityClass";
      EXPECT_EQ(meta.contains("namespace"), !cluster_scoped) << name;
      if (!cluster_scoped) {
        EXPECT_EQ(meta["namespace"], h.host_namespace) << name;
      }
    }
  }
}

TEST(HostRender, PodSecurityLevelByTierAndConfig) {
  for (auto [tier, level] : {std::pair{"shared", "baseline"}, std::pair{"isolated", "baseline"},
                             std::pair{"dedicated", "restricted"}, std::pair{"exclusive", "restricted"}}) {
    const json labels = Find(Render(Case(tier)), "Namespace")["metadata"]["labels"];
    for (const char* mode : {"enforce", "warn", "audit"}) {
      EXPECT_EQ(labels[std::string("pod-security.kubernetes.io/") + mode], level) << tier << " " << mode;
      EXPECT_EQ(labels[std::string("pod-security.kubernetes.io/") + mode + "-version"], "latest");
    }
  }
  RenderConfig config;
  config.psa_levels["shared"] = "restricted";
  const json labels = Find(Render(Case("shared"), Scheduler::kDefault, config), "Namespace")["metadata"]["labels"];
  EXPECT_EQ(labels["pod-security.kubernetes.io/enforce"], "restricted");
}

TEST(HostRender, QuotaCountsWorkloadLimitsAndReservedGpus) {
  const json shared = Find(Render(Case("shared")), "ResourceQuota")["spec"]["hard"];
  EXPECT_EQ(shared, json({{"pods", "50"},
                          {"requests.cpu", "8"},
                          {"requests.memory", "32Gi"},
                          {"requests.nvidia.com/gpu", "0"},
                          {"services.loadbalancers", "0"},
                          {"services.nodeports", "0"}}));
  // Two 3g.40gb and one 1g.10gb and one 1g.10gb+me; the tenant gets no whole GPU.
  const json isolated = Find(Render(Case("isolated")), "ResourceQuota")["spec"]["hard"];
  EXPECT_EQ(isolated, json({{"requests.cpu", "1500m"},
                            {"requests.memory", "1536Mi"},
                            {"requests.nvidia.com/gpu", "0"},
                            {"requests.nvidia.com/mig-1g.10gb", "1"},
                            {"requests.nvidia.com/mig-1g.10gb.me", "1"},
                            {"requests.nvidia.com/mig-3g.40gb", "2"},
                            {"services.loadbalancers", "0"},
                            {"services.nodeports", "0"}}));
  // No workload quota: only the GPUs are bounded.
  const json dedicated = Find(Render(Case("dedicated")), "ResourceQuota")["spec"]["hard"];
  EXPECT_EQ(dedicated,
            json({{"requests.nvidia.com/gpu", "3"}, {"services.loadbalancers", "0"}, {"services.nodeports", "0"}}));
  // Exclusive: every GPU on the reserved nodes (8 + 4).
  const json exclusive = Find(Render(Case("exclusive")), "ResourceQuota")["spec"]["hard"];
  EXPECT_EQ(exclusive["requests.nvidia.com/gpu"], "12");
}

TEST(HostRender, OnlyTheTiersAllowedExternalServicesMayHaveNodePortsOrLoadBalancers) {
  RenderConfig config;
  config.external_service_tiers = {"exclusive"};
  const json exclusive = Find(Render(Case("exclusive"), Scheduler::kKai, config), "ResourceQuota")["spec"]["hard"];
  EXPECT_FALSE(exclusive.contains("services.nodeports")) << exclusive;
  EXPECT_FALSE(exclusive.contains("services.loadbalancers")) << exclusive;
  const json shared = Find(Render(Case("shared"), Scheduler::kKai, config), "ResourceQuota")["spec"]["hard"];
  EXPECT_EQ(shared["services.nodeports"], "0");
  EXPECT_EQ(shared["services.loadbalancers"], "0");
}

TEST(HostRender, SharedQuotaLeavesVgpuSlotsToSeptaWithHami) {
  // HAMi's fractional pods each take one nvidia.com/gpu slot: a quota of 0
  // would refuse every one; the syncer keeps the milli-GPU budget instead.
  RenderConfig config;
  config.fraction_backend = FractionBackend::kHami;
  const json hard = Find(Render(Case("shared"), Scheduler::kKai, config), "ResourceQuota")["spec"]["hard"];
  EXPECT_FALSE(hard.contains("requests.nvidia.com/gpu")) << hard;
  // Other tiers are counted as with KAI.
  const json dedicated = Find(Render(Case("dedicated"), Scheduler::kKai, config), "ResourceQuota")["spec"]["hard"];
  EXPECT_EQ(dedicated["requests.nvidia.com/gpu"], "3");
}

TEST(HostRender, LimitRangeDefaultsNeverExceedTheQuota) {
  SampleCase c = Case("isolated");
  c.vcluster.quota = {50, 64, 0};
  json item = Find(Render(c), "LimitRange")["spec"]["limits"][0];
  EXPECT_EQ(item["type"], "Container");
  EXPECT_EQ(item["defaultRequest"], json({{"cpu", "50m"}, {"memory", "64Mi"}}));
  EXPECT_EQ(item["default"], json({{"cpu", "50m"}, {"memory", "64Mi"}}));
  // Without a quota: the configured request, and no default limit.
  RenderConfig config;
  config.default_request_cpu_milli = 250;
  config.default_request_memory_mib = 512;
  item = Find(Render(Case("dedicated"), Scheduler::kDefault, config), "LimitRange")["spec"]["limits"][0];
  EXPECT_EQ(item["defaultRequest"], json({{"cpu", "250m"}, {"memory", "512Mi"}}));
  EXPECT_FALSE(item.contains("default"));
}

// Issue 28, L9: the DNS rule names the host's DNS pods, not just a port
// that any address would answer on.
TEST(HostRender, NetworkPolicyDeniesAllButTheNamespaceDnsAndTheVirtualApiServer) {
  RenderConfig config;
  config.virtual_api_address = "10.96.0.10";
  config.virtual_api_port = 443;
  config.dns_port = 1053;
  const HostObjects h = Render(Case("shared"), Scheduler::kDefault, config);
  const json deny = Find(h, "NetworkPolicy", kDefaultDenyPolicyName)["spec"];
  EXPECT_EQ(deny, json({{"podSelector", json::object()}, {"policyTypes", {"Ingress", "Egress"}}}));
  const json allow = Find(h, "NetworkPolicy", kAllowPolicyName)["spec"];
  EXPECT_EQ(allow["ingress"], json::parse(R"([{"from": [{"podSelector": {}}]}])"));
  EXPECT_EQ(allow["egress"], json::parse(R"([
      {"to": [{"podSelector": {}}]},
      {"to": [{"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "kube-system"}},
               "podSelector": {"matchLabels": {"k8s-app": "kube-dns"}}}],
       "ports": [{"protocol": "UDP", "port": 53}, {"protocol": "TCP", "port": 53}]},
      {"to": [{"ipBlock": {"cidr": "10.96.0.10/32"}}], "ports": [{"protocol": "TCP", "port": 443}]}])"));
  config.virtual_api_address = "fd00::1";
  EXPECT_EQ(Find(Render(Case("shared"), Scheduler::kDefault, config), "NetworkPolicy",
                 kAllowPolicyName)["spec"]["egress"][2]["to"][0]["ipBlock"]["cidr"],
            "fd00::1/128");
}

TEST(HostRender, WorkloadsGetNoApiRightsAndTheSyncerOnlyItsNamespace) {
  const HostObjects h = Render(Case("dedicated"), Scheduler::kKai);
  EXPECT_EQ(Find(h, "ServiceAccount")["automountServiceAccountToken"], false);
  const json role = Find(h, "Role");
  EXPECT_EQ(role["metadata"]["namespace"], h.host_namespace);
  bool podgroups = false;
  for (const json& rule : role["rules"]) {
    podgroups = podgroups || rule["resources"] == json::array({"podgroups"});
  }
  EXPECT_TRUE(podgroups) << "KAI: the syncer creates PodGroups";
  const json binding = Find(h, "RoleBinding");
  EXPECT_EQ(binding["roleRef"]["kind"], "Role");
  EXPECT_EQ(binding["subjects"], json::parse(R"([{"apiGroup": "rbac.authorization.k8s.io", "kind": "User",
                                                   "name": "septa-syncer"}])"));
  // Nothing binds the workload account: no other Role or any ClusterRole.
  for (const json& o : h.objects) {
    EXPECT_NE(o["kind"], "ClusterRoleBinding");
    if (o["kind"] == "RoleBinding") {
      EXPECT_EQ(o["subjects"][0]["name"], "septa-syncer");
    }
  }
}

TEST(HostRender, KaiQueuesCountGpuUnitsMillicoresAndMegabytes) {
  const HostObjects isolated = Render(Case("isolated"), Scheduler::kKai);
  const json parent = Find(isolated, "Queue", "septa-tier-isolated");
  EXPECT_EQ(parent["metadata"]["labels"]["septa.dev/shared"], "true");
  EXPECT_EQ(parent["spec"]["resources"]["gpu"], json({{"quota", -1}, {"limit", -1}, {"overQuotaWeight", 1}}));
  const json leaf = Find(isolated, "Queue", isolated.host_namespace)["spec"];
  EXPECT_EQ(leaf["parentQueue"], "septa-tier-isolated");
  EXPECT_EQ(leaf["priority"], 100);
  // 3g + 1g + 3g + 1g instances: 8 GPU units.
  EXPECT_EQ(leaf["resources"]["gpu"], json({{"quota", 8}, {"limit", 8}, {"overQuotaWeight", 1}}));
  EXPECT_EQ(leaf["resources"]["cpu"], json({{"quota", 0}, {"limit", 1500}, {"overQuotaWeight", 1}}));
  EXPECT_EQ(leaf["resources"]["memory"], json({{"quota", 0}, {"limit", 1610}, {"overQuotaWeight", 1}}));

  // Fractions as decimals: 500 + 250 milli-GPU.
  const json shared = Find(Render(Case("shared"), Scheduler::kKai), "Queue", "septa-acme-x-notebooks")["spec"];
  EXPECT_EQ(shared["resources"]["gpu"]["quota"], 0.75);
  EXPECT_EQ(shared["resources"]["memory"]["limit"], 34359);

  const json exclusive = Find(Render(Case("exclusive"), Scheduler::kKai), "Queue", "septa-regulated-x-secure")["spec"];
  EXPECT_EQ(exclusive["priority"], 200);
  EXPECT_EQ(exclusive["resources"]["gpu"], json({{"quota", 12}, {"limit", 12}, {"overQuotaWeight", 3}}));
  // No workload quota: no CPU or memory limit.
  const json dedicated = Find(Render(Case("dedicated"), Scheduler::kKai), "Queue", "septa-bigco-x-serving")["spec"];
  EXPECT_EQ(dedicated["resources"]["cpu"]["limit"], -1);
  EXPECT_EQ(dedicated["resources"]["memory"]["limit"], -1);
}

TEST(HostRender, KueueFlavorsPerGpuProductAndQueuesPerVirtualCluster) {
  const HostObjects h = Render(Case("isolated"), Scheduler::kKueue);
  const std::string h100 = GpuFlavorName("NVIDIA-H100-80GB-HBM3");
  const std::string a100 = GpuFlavorName("NVIDIA-A100-SXM4-80GB");
  EXPECT_EQ(Find(h, "ResourceFlavor", h100)["spec"]["nodeLabels"],
            json({{"nvidia.com/gpu.product", "NVIDIA-H100-80GB-HBM3"}}));
  EXPECT_EQ(Find(h, "ResourceFlavor", "septa-default")["spec"], json::object());
  const json cq = Find(h, "ClusterQueue", h.host_namespace)["spec"];
  EXPECT_EQ(cq["cohortName"], "acme");
  EXPECT_EQ(cq["namespaceSelector"]["matchLabels"]["kubernetes.io/metadata.name"], h.host_namespace);
  EXPECT_EQ(cq["fairSharing"]["weight"], "1");
  ASSERT_EQ(cq["resourceGroups"].size(), 2u);
  EXPECT_EQ(cq["resourceGroups"][0], json::parse(R"({"coveredResources": ["cpu", "memory"], "flavors": [
      {"name": "septa-default", "resources": [{"name": "cpu", "nominalQuota": "1500m"},
                                              {"name": "memory", "nominalQuota": "1536Mi"}]}]})"));
  // Each flavor lists every covered resource in the same order, 0 where it has none.
  const json gpus = cq["resourceGroups"][1];
  EXPECT_EQ(gpus["coveredResources"],
            json({"nvidia.com/mig-1g.10gb", "nvidia.com/mig-1g.10gb.me", "nvidia.com/mig-3g.40gb"}));
  std::map<std::string, std::vector<std::string>> quotas;
  for (const json& f : gpus["flavors"]) {
    for (const json& r : f["resources"]) quotas[f["name"]].push_back(r["nominalQuota"]);
  }
  EXPECT_EQ(quotas[a100], (std::vector<std::string>{"0", "1", "1"}));
  EXPECT_EQ(quotas[h100], (std::vector<std::string>{"1", "0", "1"}));
  const json priority = Find(h, "WorkloadPriorityClass", h.host_namespace);
  EXPECT_EQ(priority["value"], 100);
  const json lq = Find(h, "LocalQueue");
  EXPECT_EQ(lq["metadata"]["namespace"], h.host_namespace);
  EXPECT_EQ(lq["spec"]["clusterQueue"], h.host_namespace);

  // Shared fractions are not extended resources: no GPU group; no workload
  // quota: CPU and memory are still covered.
  const json shared = Find(Render(Case("shared"), Scheduler::kKueue), "ClusterQueue")["spec"];
  EXPECT_EQ(shared["resourceGroups"].size(), 1u);
  const json dedicated = Find(Render(Case("dedicated"), Scheduler::kKueue), "ClusterQueue")["spec"];
  EXPECT_EQ(dedicated["resourceGroups"][0]["flavors"][0]["resources"][0]["nominalQuota"], "1M");
  EXPECT_EQ(dedicated["resourceGroups"][0]["flavors"][0]["resources"][1]["nominalQuota"], "1Pi");
}

TEST(HostRender, NodePatchesPinDedicatedAndFenceExclusive) {
  EXPECT_TRUE(Render(Case("shared")).node_patches.empty());
  EXPECT_TRUE(Render(Case("isolated")).node_patches.empty());
  const HostObjects dedicated = Render(Case("dedicated"));
  const std::string label = "vcluster.septa.dev/" + dedicated.host_namespace;
  ASSERT_EQ(dedicated.node_patches.size(), 2u);  // two GPUs on h100-0 give one patch
  EXPECT_EQ(dedicated.node_patches[0], (NodePatch{"a100-0", {{label, "dedicated"}}, {}}));
  EXPECT_EQ(dedicated.node_patches[1], (NodePatch{"h100-0", {{label, "dedicated"}}, {}}));
  const HostObjects exclusive = Render(Case("exclusive"));
  ASSERT_EQ(exclusive.node_patches.size(), 2u);
  const NodePatch& p = exclusive.node_patches[0];
  EXPECT_EQ(p.node, "a100-1");
  EXPECT_EQ(p.labels.at("septa.dev/exclusive-tenant"), "regulated");
  EXPECT_EQ(p.labels.at("vcluster.septa.dev/" + exclusive.host_namespace), "exclusive");
  EXPECT_EQ(p.taints, (std::vector<gpu::Taint>{{"septa.dev/exclusive-tenant", "regulated", "NoSchedule"}}));
}

// The host namespace is the one stored with the virtual cluster (given when
// it was created, maybe by an earlier HostNamespaceName), never derived again.
TEST(HostRender, EverythingIsInTheStoredHostNamespace) {
  SampleCase c = Case("exclusive");
  c.vcluster.host_namespace = "septa-regulated-x-secure-given-earlier";
  const HostObjects h = Render(c, Scheduler::kKai);
  EXPECT_EQ(h.host_namespace, c.vcluster.host_namespace);
  EXPECT_EQ(Find(h, "Namespace", c.vcluster.host_namespace)["metadata"]["name"], c.vcluster.host_namespace);
  EXPECT_EQ(Find(h, "Queue", c.vcluster.host_namespace)["metadata"]["name"], c.vcluster.host_namespace);
  for (const json& o : h.objects) {
    if (o["metadata"].contains("namespace")) {
      EXPECT_EQ(o["metadata"]["namespace"], c.vcluster.host_namespace);
    }
  }
  ASSERT_FALSE(h.node_patches.empty());
  EXPECT_EQ(h.node_patches[0].labels.at("vcluster.septa.dev/" + c.vcluster.host_namespace), "exclusive");
}

TEST(HostRender, RefusesInputsThatDoNotBelongTogether) {
  SampleCase c = Case("dedicated");
  RenderConfig config;
  auto render = [&](const SampleCase& s, const std::vector<gpu::InventoryNode>& nodes) {
    return RenderHostObjects(s.tier, s.vcluster, s.reservation, nodes, config).status();
  };
  SampleCase unnamed = c;
  unnamed.vcluster.host_namespace.clear();
  const Status no_namespace = render(unnamed, SampleNodes());
  EXPECT_EQ(no_namespace.code(), Code::kInvalidArgument);
  ASSERT_EQ(no_namespace.violations().size(), 1u);
  EXPECT_EQ(no_namespace.violations()[0].field, "vcluster.host_namespace");
  SampleCase other = c;
  other.reservation.vcluster = "other";
  EXPECT_EQ(render(other, SampleNodes()).code(), Code::kFailedPrecondition);
  SampleCase wrong_tier = c;
  wrong_tier.tier.gpu_sharing = gpu::Tier::kShared;
  Status st = render(wrong_tier, SampleNodes());
  EXPECT_EQ(st.code(), Code::kFailedPrecondition);
  EXPECT_EQ(st.message(), "reservation is dedicated, trust tier \"dedicated\" shares GPUs as shared");
  SampleCase bad_name = c;
  bad_name.vcluster.tenant = "Bad";
  bad_name.reservation.tenant = "Bad";
  st = render(bad_name, SampleNodes());
  ASSERT_EQ(st.violations().size(), 1u);
  EXPECT_EQ(st.violations()[0].field, "vcluster.tenant");
  SampleCase weightless = c;
  weightless.vcluster.queue.over_quota_weight = 0;  // never more than quota: valid
  EXPECT_TRUE(render(weightless, SampleNodes()).ok());
  weightless.vcluster.queue.over_quota_weight = -1;
  st = render(weightless, SampleNodes());
  ASSERT_EQ(st.violations().size(), 1u);
  EXPECT_EQ(st.violations()[0].field, "queue.over_quota_weight");
  config.dns_port = 0;
  st = render(c, SampleNodes());
  ASSERT_EQ(st.violations().size(), 1u);
  EXPECT_EQ(st.violations()[0].field, "dns_port");
  config = {};

  // Exclusive needs its nodes' GPU counts.
  st = render(Case("exclusive"), {});
  EXPECT_EQ(st.code(), Code::kNotFound);
  EXPECT_EQ(st.message(), "reservation: node \"h100-1\" is not in the inventory");
  // Kueue needs the GPU product label; KAI does not.
  auto unlabelled = SampleNodes();
  for (auto& n : unlabelled) n.labels.erase("nvidia.com/gpu.product");
  EXPECT_TRUE(render(Case("isolated"), unlabelled).ok());
  config.scheduler = Scheduler::kKueue;
  st = render(Case("isolated"), unlabelled);
  EXPECT_EQ(st.code(), Code::kFailedPrecondition);
  EXPECT_EQ(st.message(), "node \"h100-0\" has no nvidia.com/gpu.product label");
}

}  // namespace
}  // namespace septa::tenancy::host
