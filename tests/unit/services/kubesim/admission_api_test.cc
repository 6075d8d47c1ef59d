// Through kubesim's HTTPS API: the scheduler CRDs installed at start, and pod
// admission (LimitRange defaults, ResourceQuota refusals, quota status kept
// current) on every path that creates a pod.
#include <gtest/gtest.h>

#include <functional>
#include <thread>

#include "services/kube/client.h"
#include "services/kube/resources.h"
#include "services/kubesim/kubesim.h"
#include "tests/support/fake_clock.h"

namespace septa::kubesim {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

using kube::kClusterQueues;
using kube::kKaiQueues;
using kube::kLimitRanges;
using kube::kLocalQueues;
using kube::kNamespaces;
using kube::kPods;
using kube::kResourceFlavors;
using kube::kResourceQuotas;
const kube::Resource kCrds{"apiextensions.k8s.io", "v1", "customresourcedefinitions", false};
const kube::Resource kPodGroups{"scheduling.run.ai", "v2alpha2", "podgroups", true};
const kube::Resource kWorkloads{"kueue.x-k8s.io", "v1beta2", "workloads", true};

json PodWithResources(const std::string& name, json resources = json::object()) {
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata", {{"name", name}}},
          {"spec", {{"containers", {{{"name", "c"}, {"image", "busybox"}, {"resources", resources}}}}}}};
}

class kubesimAdmission : public ::testing::Test {
 protected:
  void SetUp() override { Start(true); }

  void Start(bool scheduler_crds) {
    if (sim_) sim_->Stop();
    KubeSimOptions options;
    options.clock = &clock_;
    options.tick_interval = 5ms;
    options.scheduler_crds = scheduler_crds;
    sim_ = std::make_unique<KubeSim>(options);
    ASSERT_TRUE(sim_->Start().ok());
    auto config = kube::ParseKubeconfig(*sim_->AdminKubeconfig());
    client_ = std::move(*kube::Client::Create(*config));
  }

  void Create(const kube::Resource& r, const std::string& ns, const json& object) {
    auto created = client_->Create(r, ns, object);
    ASSERT_TRUE(created.ok()) << created.status().ToString();
  }

  json Used(const std::string& name = "team-quota") {
    auto quota = client_->Get(kResourceQuotas, "team", name);
    EXPECT_TRUE(quota.ok()) << quota.status().ToString();
    return quota.ok() ? (*quota)["status"].value("used", json::object()) : json();
  }

  // Polls until `pred` holds for the quota's status.used (ticks every 5 ms).
  json WaitForUsed(const std::function<bool(const json&)>& pred) {
    json last;
    for (int i = 0; i < 400; ++i) {
      last = Used();
      if (pred(last)) return last;
      std::this_thread::sleep_for(5ms);
    }
    ADD_FAILURE() << "quota status never matched: " << last.dump();
    return last;
  }

  void TeamWithQuota(json hard) {
    Create(kNamespaces, "", {{"metadata", {{"name", "team"}}}});
    Create(kResourceQuotas, "team", {{"metadata", {{"name", "team-quota"}}}, {"spec", {{"hard", hard}}}});
  }

  FakeClock clock_;
  std::unique_ptr<KubeSim> sim_;
  std::unique_ptr<kube::Client> client_;
};

TEST_F(kubesimAdmission, SchedulerCrdsAreServedFromTheStart) {
  auto crds = client_->List(kCrds, "");
  ASSERT_TRUE(crds.ok());
  std::vector<std::string> names;
  for (const kube::Object& crd : crds->items) names.emplace_back(crd.Name());
  EXPECT_EQ(names, (std::vector<std::string>{"clusterqueues.kueue.x-k8s.io", "localqueues.kueue.x-k8s.io",
                                             "podgroups.scheduling.run.ai", "queues.scheduling.run.ai",
                                             "resourceflavors.kueue.x-k8s.io", "workloadpriorityclasses.kueue.x-k8s.io",
                                             "workloads.kueue.x-k8s.io"}));

  // What the provisioner writes for KAI: a parent queue per tier, a leaf per virtual cluster.
  Create(kKaiQueues, "", json::parse(R"({"apiVersion": "scheduling.run.ai/v2", "kind": "Queue",
      "metadata": {"name": "tier-shared"},
      "spec": {"resources": {"gpu": {"quota": -1, "limit": -1, "overQuotaWeight": 1}}}})"));
  Create(kKaiQueues, "", json::parse(R"({"apiVersion": "scheduling.run.ai/v2", "kind": "Queue",
      "metadata": {"name": "acme-dev"},
      "spec": {"parentQueue": "tier-shared", "priority": 100,
               "resources": {"gpu": {"quota": 2, "limit": 2, "overQuotaWeight": 1},
                             "cpu": {"quota": 8000, "limit": -1, "overQuotaWeight": 1},
                             "memory": {"quota": 64000, "limit": -1, "overQuotaWeight": 1}}}})"));
  auto leaf = client_->Get(kKaiQueues, "", "acme-dev");
  ASSERT_TRUE(leaf.ok());
  EXPECT_EQ((*leaf)["spec"]["parentQueue"], "tier-shared");
  EXPECT_EQ((*leaf)["spec"]["resources"]["cpu"]["quota"], 8000);

  Create(kNamespaces, "", {{"metadata", {{"name", "team"}}}});
  Create(kPodGroups, "team", json::parse(R"({"apiVersion": "scheduling.run.ai/v2alpha2", "kind": "PodGroup",
      "metadata": {"name": "gang"}, "spec": {"minMember": 4, "queue": "acme-dev"}})"));
  // ... and for Kueue: flavors, a ClusterQueue in the tenant's cohort, a LocalQueue.
  Create(kResourceFlavors, "", json::parse(R"({"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ResourceFlavor",
      "metadata": {"name": "h100-mig-1g-10gb"},
      "spec": {"nodeLabels": {"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3"}}})"));
  Create(kClusterQueues, "", json::parse(R"({"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue",
      "metadata": {"name": "acme-dev"},
      "spec": {"cohortName": "acme",
               "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "team"}},
               "resourceGroups": [{"coveredResources": ["nvidia.com/mig-1g.10gb"],
                                   "flavors": [{"name": "h100-mig-1g-10gb",
                                                "resources": [{"name": "nvidia.com/mig-1g.10gb",
                                                               "nominalQuota": 7}]}]}]}})"));
  Create(kLocalQueues, "team", json::parse(R"({"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "LocalQueue",
      "metadata": {"name": "default"}, "spec": {"clusterQueue": "acme-dev"}})"));
  Create(kWorkloads, "team", json::parse(R"({"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Workload",
      "metadata": {"name": "job-1"}, "spec": {"queueName": "default", "podSets": []}})"));
  Create({"kueue.x-k8s.io", "v1beta2", "workloadpriorityclasses", false}, "",
         json::parse(R"({"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "WorkloadPriorityClass",
      "metadata": {"name": "acme-dev"}, "value": 100, "description": "acme/dev"})"));
  auto cq = client_->Get(kClusterQueues, "", "acme-dev");
  ASSERT_TRUE(cq.ok());
  EXPECT_EQ((*cq)["spec"]["cohortName"], "acme");
  EXPECT_EQ((*cq)["spec"]["resourceGroups"][0]["flavors"][0]["resources"][0]["nominalQuota"], 7);
  auto lq = client_->Get(kLocalQueues, "team", "default");
  ASSERT_TRUE(lq.ok());
  EXPECT_EQ((*lq)["spec"]["clusterQueue"], "acme-dev");
  EXPECT_TRUE(client_->Get(kPodGroups, "team", "gang").ok());
  EXPECT_TRUE(client_->Get(kWorkloads, "team", "job-1").ok());
  EXPECT_TRUE(client_->Get(kResourceFlavors, "", "h100-mig-1g-10gb").ok());
  // Scope follows the CRD: a LocalQueue lives in its namespace.
  EXPECT_EQ(client_->List(kLocalQueues, "default")->items.size(), 0u);
  EXPECT_EQ(client_->List(kLocalQueues, "team")->items.size(), 1u);
}

TEST_F(kubesimAdmission, ApplyingTheSchedulerCrdsAgainTakesThemOver) {
  // As when the real charts (or a test's own CRDs) are applied over them.
  json queues = json::parse(R"({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
      "metadata": {"name": "queues.scheduling.run.ai"},
      "spec": {"group": "scheduling.run.ai", "scope": "Cluster",
               "names": {"plural": "queues", "singular": "queue", "kind": "Queue"},
               "versions": [{"name": "v2", "served": true, "storage": true,
                             "schema": {"openAPIV3Schema": {"type": "object",
                                                            "x-kubernetes-preserve-unknown-fields": true}}}]}})");
  auto applied = client_->Apply(kCrds, "", queues, "helm");
  ASSERT_TRUE(applied.ok()) << applied.status().ToString();
  EXPECT_EQ((*applied)["spec"]["versions"][0]["schema"], queues["spec"]["versions"][0]["schema"]);
  Create(kKaiQueues, "", {{"apiVersion", "scheduling.run.ai/v2"}, {"kind", "Queue"}, {"metadata", {{"name", "q"}}}});
}

TEST_F(kubesimAdmission, SchedulerCrdsCanBeLeftOut) {
  Start(false);
  EXPECT_EQ(client_->List(kCrds, "")->items.size(), 0u);
  EXPECT_EQ(client_->Get(kKaiQueues, "", "any").status().code(), Code::kNotFound);
  EXPECT_EQ(client_->List(kClusterQueues, "").status().code(), Code::kNotFound);
}

TEST_F(kubesimAdmission, QuotaRefusesWhatWouldExceedItOnEveryCreatePath) {
  TeamWithQuota({{"pods", "3"}, {"requests.cpu", "1"}, {"requests.memory", "1Gi"}, {"requests.nvidia.com/gpu", "1"}});
  json used = Used();
  EXPECT_EQ(used,
            (json{{"pods", "0"}, {"requests.cpu", "0"}, {"requests.memory", "0"}, {"requests.nvidia.com/gpu", "0"}}));
  auto quota = client_->Get(kResourceQuotas, "team", "team-quota");
  EXPECT_EQ((*quota)["status"]["hard"]["requests.memory"], "1Gi");

  Create(kPods, "team",
         PodWithResources(
             "a", {{"requests", {{"cpu", "600m"}, {"memory", "512Mi"}}}, {"limits", {{"nvidia.com/gpu", "1"}}}}));
  EXPECT_EQ(
      Used(),
      (json{{"pods", "1"}, {"requests.cpu", "600m"}, {"requests.memory", "512Mi"}, {"requests.nvidia.com/gpu", "1"}}));

  // POST
  auto refused =
      client_->Create(kPods, "team", PodWithResources("b", {{"requests", {{"cpu", "500m"}, {"memory", "64Mi"}}}}));
  ASSERT_EQ(refused.status().code(), Code::kPermissionDenied);
  EXPECT_NE(refused.status().message().find("pods \"b\" is forbidden: exceeded quota: team-quota, requested: "
                                            "requests.cpu=500m, used: requests.cpu=600m, limited: requests.cpu=1"),
            std::string::npos)
      << refused.status().message();
  // Server-side apply that would create the pod.
  auto applied = client_->Apply(kPods, "team",
                                PodWithResources("g", {{"requests", {{"cpu", "100m"}, {"memory", "64Mi"}}},
                                                       {"limits", {{"nvidia.com/gpu", "1"}}}}),
                                "septa");
  ASSERT_EQ(applied.status().code(), Code::kPermissionDenied);
  EXPECT_NE(applied.status().message().find("pods \"g\" is forbidden: exceeded quota: team-quota, requested: "
                                            "requests.nvidia.com/gpu=1, used: requests.nvidia.com/gpu=1, limited: "
                                            "requests.nvidia.com/gpu=1"),
            std::string::npos)
      << applied.status().message();
  // Nothing was stored, nothing charged; a dry run that fits charges nothing either.
  EXPECT_EQ(client_->Get(kPods, "team", "b").status().code(), Code::kNotFound);
  EXPECT_EQ(client_->Get(kPods, "team", "g").status().code(), Code::kNotFound);
  kube::WriteOptions dry;
  dry.dry_run = true;
  EXPECT_TRUE(
      client_->Create(kPods, "team", PodWithResources("d", {{"requests", {{"cpu", "100m"}, {"memory", "64Mi"}}}}), dry)
          .ok());
  EXPECT_EQ(Used()["requests.cpu"], "600m");

  // An apply that fits creates the pod and is charged.
  ASSERT_TRUE(
      client_
          ->Apply(kPods, "team", PodWithResources("s", {{"requests", {{"cpu", "400m"}, {"memory", "64Mi"}}}}), "septa")
          .ok());
  EXPECT_EQ(Used()["requests.cpu"], "1");
  EXPECT_EQ(Used()["pods"], "2");
  // Deleting a pod gives its share back at once.
  ASSERT_TRUE(client_->Delete(kPods, "team", "a").ok());
  EXPECT_EQ(
      Used(),
      (json{{"pods", "1"}, {"requests.cpu", "400m"}, {"requests.memory", "64Mi"}, {"requests.nvidia.com/gpu", "0"}}));
  Create(kPods, "team", PodWithResources("b", {{"requests", {{"cpu", "500m"}, {"memory", "64Mi"}}}}));
}

TEST_F(kubesimAdmission, AQuotaWithAnUnknownResourceIsInvalid) {
  Create(kNamespaces, "", {{"metadata", {{"name", "team"}}}});
  auto bad =
      client_->Create(kResourceQuotas, "team", {{"metadata", {{"name", "q"}}}, {"spec", {{"hard", {{"gpus", "1"}}}}}});
  EXPECT_EQ(bad.status().code(), Code::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("must be a standard resource for quota"), std::string::npos)
      << bad.status().message();
  EXPECT_EQ(client_->Get(kResourceQuotas, "team", "q").status().code(), Code::kNotFound);
}

TEST_F(kubesimAdmission, LimitRangeDefaultsLetAQuotaAdmitPodsThatSetNothing) {
  TeamWithQuota({{"requests.cpu", "2"}, {"limits.memory", "1Gi"}});
  auto bare = client_->Create(kPods, "team", PodWithResources("bare"));
  ASSERT_EQ(bare.status().code(), Code::kPermissionDenied);
  EXPECT_NE(bare.status().message().find(
                "pods \"bare\" is forbidden: failed quota: team-quota: must specify limits.memory for: c; "
                "requests.cpu for: c"),
            std::string::npos)
      << bare.status().message();
  Create(kLimitRanges, "team",
         {{"metadata", {{"name", "defaults"}}},
          {"spec",
           {{"limits",
             {{{"type", "Container"},
               {"default", {{"cpu", "500m"}, {"memory", "256Mi"}}},
               {"defaultRequest", {{"cpu", "250m"}, {"memory", "128Mi"}}}}}}}}});
  Create(kPods, "team", PodWithResources("bare"));
  auto pod = client_->Get(kPods, "team", "bare");
  ASSERT_TRUE(pod.ok());
  EXPECT_EQ((*pod)["spec"]["containers"][0]["resources"], (json{{"limits", {{"cpu", "500m"}, {"memory", "256Mi"}}},
                                                                {"requests", {{"cpu", "250m"}, {"memory", "128Mi"}}}}));
  EXPECT_EQ((*pod)["status"]["qosClass"], "Burstable");
  EXPECT_EQ(Used(), (json{{"requests.cpu", "250m"}, {"limits.memory", "256Mi"}}));
}

TEST_F(kubesimAdmission, PodsThatFinishOrGoStopCountingWhoeverWroteThem) {
  TeamWithQuota({{"pods", "1"}, {"count/pods", "5"}});
  Create(kPods, "team", PodWithResources("a"));
  EXPECT_EQ(Used(), (json{{"pods", "1"}, {"count/pods", "1"}}));
  // A controller that writes storage directly (as the node simulator does)
  // bypasses the API's write path; the quota controller's watch on pods sees
  // it and the next tick gives the share back.
  (void)sim_->cluster().storage.Mutate("pods", "team", "a", [](const json* current) -> ApiResult<Mutation> {
    json next = *current;
    next["status"]["phase"] = "Succeeded";
    return Mutation{Mutation::Kind::kPut, std::move(next)};
  });
  WaitForUsed([](const json& used) { return used == json{{"pods", "0"}, {"count/pods", "1"}}; });
  Create(kPods, "team", PodWithResources("b"));
  (void)sim_->cluster().storage.Mutate("pods", "team", "b", [](const json*) -> ApiResult<Mutation> {
    return Mutation{Mutation::Kind::kDelete, {}};
  });
  WaitForUsed([](const json& used) { return used == json{{"pods", "0"}, {"count/pods", "1"}}; });
  // A quota written later is recounted from the pods as they are.
  auto quota = client_->Get(kResourceQuotas, "team", "team-quota");
  ASSERT_TRUE(quota.ok());
  json changed = *quota;
  changed["spec"]["hard"]["pods"] = "2";
  ASSERT_TRUE(client_->Update(kResourceQuotas, "team", changed).ok());
  EXPECT_EQ(Used(), (json{{"pods", "0"}, {"count/pods", "1"}}));
}

}  // namespace
}  // namespace septa::kubesim
