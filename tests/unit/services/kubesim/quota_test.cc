// Pod admission without a server: request defaulting, LimitRanger, the QoS
// class, ResourceQuota's refusals in the API server's words, and quota status.
#include "services/kubesim/quota.h"

#include <gtest/gtest.h>

#include <vector>

namespace septa::kubesim {
namespace {

using nlohmann::json;

ObjectPtr Obj(json j) { return std::make_shared<const json>(std::move(j)); }

json Container(const std::string& name, json requests = nullptr, json limits = nullptr) {
  json c = {{"name", name}, {"image", "busybox"}};
  if (!requests.is_null()) c["resources"]["requests"] = requests;
  if (!limits.is_null()) c["resources"]["limits"] = limits;
  return c;
}

// Containers as a vector: a braced list of one json element is an array to
// GCC but a copy of that element to Clang.
json Pod(const std::string& name, std::vector<json> containers, std::string phase = "Pending") {
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata", {{"name", name}, {"namespace", "team"}}},
          {"spec", {{"containers", containers}}},
          {"status", {{"phase", phase}}}};
}

// A quota whose status the quota controller has computed over `pods`.
ObjectPtr Quota(const std::string& name, json hard, const std::vector<ObjectPtr>& pods = {}) {
  json quota = {{"metadata", {{"name", name}, {"namespace", "team"}}}, {"spec", {{"hard", hard}}}};
  quota["status"] = QuotaStatus(quota, pods);
  return Obj(std::move(quota));
}

ObjectPtr Limits(json item) {
  item["type"] = "Container";
  return Obj(
      {{"metadata", {{"name", "defaults"}, {"namespace", "team"}}}, {"spec", {{"limits", json::array({item})}}}});
}

std::string Refusal(const ApiResult<AdmittedPod>& r) {
  if (r.ok()) return "(admitted)";
  const ApiError& e = r.error();
  EXPECT_EQ(e.code, 403);
  EXPECT_EQ(e.reason, "Forbidden");
  return e.message;
}

TEST(kubesimQuota, ExceededQuotaInTheApiServersWords) {
  PodAdmissionContext ctx;
  ctx.quotas = {Quota("team-quota", {{"requests.cpu", "1"}, {"requests.memory", "1Gi"}, {"pods", "10"}},
                      {Obj(Pod("a", {Container("c", {{"cpu", "250m"}, {"memory", "256Mi"}})}))})};
  auto refused = AdmitPod(Pod("big", {Container("c", {{"cpu", "1"}, {"memory", "512Mi"}})}), ctx);
  EXPECT_EQ(Refusal(refused),
            "pods \"big\" is forbidden: exceeded quota: team-quota, requested: requests.cpu=1, used: "
            "requests.cpu=250m, limited: requests.cpu=1");
  EXPECT_EQ(refused.error().kind, "pods");
  EXPECT_EQ(refused.error().name, "big");
  // Several resources over: all of them, sorted, comma-separated.
  auto both = AdmitPod(Pod("big", {Container("c", {{"cpu", "900m"}, {"memory", "800Mi"}})}), ctx);
  EXPECT_EQ(
      Refusal(both),
      "pods \"big\" is forbidden: exceeded quota: team-quota, requested: requests.cpu=900m,requests.memory=800Mi, "
      "used: requests.cpu=250m,requests.memory=256Mi, limited: requests.cpu=1,requests.memory=1Gi");
  // Exactly at the limit fits.
  EXPECT_TRUE(AdmitPod(Pod("fits", {Container("c", {{"cpu", "750m"}, {"memory", "768Mi"}})}), ctx).ok());
}

TEST(kubesimQuota, PodCountAndFinishedPods) {
  PodAdmissionContext ctx;
  json hard = {{"pods", "2"}, {"count/pods", "5"}};
  std::vector<ObjectPtr> pods = {Obj(Pod("a", {Container("c")})), Obj(Pod("b", {Container("c")}))};
  ctx.quotas = {Quota("q", hard, pods)};
  EXPECT_EQ(Refusal(AdmitPod(Pod("c", {Container("c")}), ctx)),
            "pods \"c\" is forbidden: exceeded quota: q, requested: pods=1, used: pods=2, limited: pods=2");
  // A finished pod no longer counts in `pods`, still in `count/pods`.
  pods[1] = Obj(Pod("b", {Container("c")}, "Succeeded"));
  ctx.quotas = {Quota("q", hard, pods)};
  EXPECT_TRUE(AdmitPod(Pod("c", {Container("c")}), ctx).ok());
  EXPECT_EQ((*ctx.quotas[0])["status"]["used"], (json{{"pods", "1"}, {"count/pods", "2"}}));
  EXPECT_EQ((*ctx.quotas[0])["status"]["hard"], hard);
}

TEST(kubesimQuota, GpuAndMigExtendedResourcesInTheRequestsForm) {
  PodAdmissionContext ctx;
  ctx.quotas = {Quota("gpu", {{"requests.nvidia.com/gpu", "2"}, {"requests.nvidia.com/mig-1g.10gb", "3"}},
                      {Obj(Pod("a", {Container("c", nullptr, {{"nvidia.com/gpu", "2"}})}))})};
  // Limits alone: requests default to them, and the quota counts requests.
  EXPECT_EQ(Refusal(AdmitPod(Pod("b", {Container("c", nullptr, {{"nvidia.com/gpu", 1}})}), ctx)),
            "pods \"b\" is forbidden: exceeded quota: gpu, requested: requests.nvidia.com/gpu=1, used: "
            "requests.nvidia.com/gpu=2, limited: requests.nvidia.com/gpu=2");
  EXPECT_EQ(Refusal(AdmitPod(Pod("m", {Container("c", nullptr, {{"nvidia.com/mig-1g.10gb", "4"}})}), ctx)),
            "pods \"m\" is forbidden: exceeded quota: gpu, requested: requests.nvidia.com/mig-1g.10gb=4, used: "
            "requests.nvidia.com/mig-1g.10gb=0, limited: requests.nvidia.com/mig-1g.10gb=3");
  EXPECT_TRUE(AdmitPod(Pod("m", {Container("c", nullptr, {{"nvidia.com/mig-1g.10gb", "3"}})}), ctx).ok());
  EXPECT_EQ((*ctx.quotas[0])["status"]["used"],
            (json{{"requests.nvidia.com/gpu", "2"}, {"requests.nvidia.com/mig-1g.10gb", "0"}}));
  // The bare form is accepted in a quota but charged for nothing, as by the API server.
  ctx.quotas = {Quota("bare", {{"nvidia.com/gpu", "1"}})};
  EXPECT_TRUE(AdmitPod(Pod("b", {Container("c", nullptr, {{"nvidia.com/gpu", "4"}})}), ctx).ok());
  EXPECT_EQ((*ctx.quotas[0])["status"], (json{{"hard", {{"nvidia.com/gpu", "1"}}}, {"used", json::object()}}));
  EXPECT_FALSE(ChargedForPods("nvidia.com/gpu"));
  EXPECT_TRUE(ChargedForPods("requests.nvidia.com/gpu"));
  EXPECT_FALSE(ChargedForPods("requests.kubernetes.io/foo"));
  EXPECT_FALSE(ChargedForPods("services"));
}

TEST(kubesimQuota, CpuOrMemoryQuotaNeedsEveryContainerToSetThem) {
  PodAdmissionContext ctx;
  ctx.quotas = {Quota("team-quota", {{"requests.cpu", "4"}, {"limits.memory", "8Gi"}})};
  json pod = Pod("bare", {Container("app"), Container("side", {{"cpu", "100m"}}, {{"memory", "64Mi"}})});
  pod["spec"]["initContainers"] = json::array({Container("init", {{"cpu", "100m"}})});
  EXPECT_EQ(Refusal(AdmitPod(pod, ctx)),
            "pods \"bare\" is forbidden: failed quota: team-quota: must specify limits.memory for: app,init; "
            "requests.cpu for: app");
  // A LimitRange's defaults satisfy it.
  ctx.limit_ranges = {Limits({{"default", {{"cpu", "500m"}, {"memory", "256Mi"}}}})};
  auto admitted = AdmitPod(pod, ctx);
  ASSERT_TRUE(admitted.ok()) << admitted.error().message;
}

TEST(kubesimQuota, LimitRangeDefaultsContainersThatSetNone) {
  PodAdmissionContext ctx;
  ctx.limit_ranges = {Limits({{"default", {{"cpu", "500m"}, {"memory", "256Mi"}}},
                              {"defaultRequest", {{"cpu", "250m"}}},
                              {"max", {{"nvidia.com/gpu", "1"}}}})};
  json pod = Pod("p", {Container("plain"), Container("own", {{"cpu", "1"}}, {{"cpu", "2"}})});
  auto admitted = AdmitPod(pod, ctx);
  ASSERT_TRUE(admitted.ok());
  const json& got = admitted->pod;
  // default -> limits; defaultRequest -> requests; default stands in for a
  // missing defaultRequest, max for a missing default (the API server's
  // LimitRange defaulting).
  EXPECT_EQ(got["spec"]["containers"][0]["resources"],
            (json{{"limits", {{"cpu", "500m"}, {"memory", "256Mi"}, {"nvidia.com/gpu", "1"}}},
                  {"requests", {{"cpu", "250m"}, {"memory", "256Mi"}, {"nvidia.com/gpu", "1"}}}}));
  // What a container set itself stays; only the missing keys are filled.
  EXPECT_EQ(got["spec"]["containers"][1]["resources"],
            (json{{"limits", {{"cpu", "2"}, {"memory", "256Mi"}, {"nvidia.com/gpu", "1"}}},
                  {"requests", {{"cpu", "1"}, {"memory", "256Mi"}, {"nvidia.com/gpu", "1"}}}}));
  EXPECT_EQ(got["status"]["qosClass"], "Burstable");
}

TEST(kubesimQuota, QosClass) {
  PodAdmissionContext none;
  auto qos = [&](std::vector<json> containers) {
    auto r = AdmitPod(Pod("p", std::move(containers)), none);
    return !r.ok() ? std::string("error") : r->pod["status"].value("qosClass", "");
  };
  EXPECT_EQ(qos({Container("c")}), "BestEffort");
  EXPECT_EQ(qos({Container("c", nullptr, {{"cpu", "1"}, {"memory", "1Gi"}})}), "Guaranteed");
  EXPECT_EQ(qos({Container("c", {{"cpu", "500m"}}, {{"cpu", "1"}, {"memory", "1Gi"}})}), "Burstable");
  EXPECT_EQ(qos({Container("c", nullptr, {{"nvidia.com/gpu", "1"}})}), "BestEffort");
}

TEST(kubesimQuota, UsageAddsContainersAndTakesTheLargestInitContainer) {
  json pod = Pod("p", {Container("a", {{"cpu", "1"}, {"memory", "1Gi"}}), Container("b", {{"cpu", "500m"}})});
  pod["spec"]["initContainers"] = json::array({Container("i", {{"cpu", "2"}, {"memory", "512Mi"}})});
  auto usage = PodUsage(pod);
  ASSERT_TRUE(usage.ok());
  const ResourceAmounts& u = *usage;
  EXPECT_EQ(FormatAmount(u.at("requests.cpu")), "2");       // the init container needs more than 1.5
  EXPECT_EQ(FormatAmount(u.at("requests.memory")), "1Gi");  // the containers need more than 512Mi
  EXPECT_EQ(FormatAmount(u.at("pods")), "1");
  EXPECT_FALSE(u.contains("limits.cpu"));
  // A quantity that does not parse is the decoder's 400.
  auto bad = PodUsage(Pod("p", {Container("a", {{"cpu", "lots"}})}));
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().code, 400);
  EXPECT_NE(bad.error().message.find("quantities must match the regular expression"), std::string::npos);
}

// A sidecar (restartPolicy Always) runs beside every init container after
// it: that one's need is its own plus the sidecar's, as the scheduler counts.
TEST(kubesimQuota, UsageCountsSidecarsBesideTheInitContainersAfterThem) {
  json sidecar = Container("proxy", {{"nvidia.com/gpu", "1"}, {"cpu", "1"}});
  sidecar["restartPolicy"] = "Always";
  json pod = Pod("p", {Container("main", {{"nvidia.com/gpu", "1"}})});
  pod["spec"]["initContainers"] = json::array({sidecar, Container("warm", {{"nvidia.com/gpu", "2"}})});
  auto usage = PodUsage(pod);
  ASSERT_TRUE(usage.ok());
  const ResourceAmounts& u = *usage;
  EXPECT_EQ(FormatAmount(u.at("requests.nvidia.com/gpu")), "3") << "warm runs beside the proxy";
  EXPECT_EQ(FormatAmount(u.at("requests.cpu")), "1");
  pod["spec"]["initContainers"] = json::array({Container("warm", {{"nvidia.com/gpu", "2"}}), sidecar});
  EXPECT_EQ(FormatAmount(PodUsage(pod)->at("requests.nvidia.com/gpu")), "2")
      << "warm runs alone, before the proxy starts";
}

TEST(kubesimQuota, QuotaStatusInCanonicalQuantities) {
  ObjectPtr quota =
      Quota("q", {{"requests.cpu", "2000m"}, {"requests.memory", "1024Mi"}, {"limits.memory", 1000000000}});
  std::vector<ObjectPtr> pods = {Obj(Pod("a", {Container("c", {{"cpu", "1500m"}, {"memory", "1536Mi"}})}))};
  json status = QuotaStatus(*quota, pods);
  EXPECT_EQ(status["hard"], (json{{"requests.cpu", "2"}, {"requests.memory", "1Gi"}, {"limits.memory", "1G"}}));
  EXPECT_EQ(status["used"], (json{{"requests.cpu", "1500m"}, {"requests.memory", "1536Mi"}, {"limits.memory", "0"}}));
}

TEST(kubesimQuota, ChargingAndReleasingWithoutRecountingThePods) {
  ObjectPtr quota = Quota("q", {{"pods", "5"}, {"requests.memory", "2Gi"}, {"requests.nvidia.com/gpu", "4"}});
  PodAdmissionContext ctx;
  ctx.quotas = {quota};
  auto admitted = AdmitPod(Pod("a", {Container("c", {{"memory", "512Mi"}}, {{"nvidia.com/gpu", "1"}})}), ctx);
  ASSERT_TRUE(admitted.ok());
  const ResourceAmounts& usage = admitted->usage;
  json charged = *quota;
  charged["status"] = ChargeQuota(*quota, usage);
  EXPECT_EQ(charged["status"]["used"],
            (json{{"pods", "1"}, {"requests.memory", "512Mi"}, {"requests.nvidia.com/gpu", "1"}}));
  EXPECT_EQ(charged["status"]["hard"], (*quota)["status"]["hard"]);
  json twice = charged;
  twice["status"] = ChargeQuota(charged, usage);
  EXPECT_EQ(twice["status"]["used"],
            (json{{"pods", "2"}, {"requests.memory", "1Gi"}, {"requests.nvidia.com/gpu", "2"}}));
  // Released, it is what a recount would give; never below zero.
  json released = twice;
  released["status"] = ChargeQuota(twice, usage, /*release=*/true);
  EXPECT_EQ(released["status"], charged["status"]);
  EXPECT_EQ(ChargeQuota(*quota, usage, true)["used"],
            (json{{"pods", "0"}, {"requests.memory", "0"}, {"requests.nvidia.com/gpu", "0"}}));
}

TEST(kubesimQuota, HardLimitsAreValidatedAsTheApiServerDoes) {
  std::vector<StatusCause> causes;
  ValidateQuotaHard(*Quota("q", {{"pods", "10"},
                                 {"requests.nvidia.com/gpu", "2"},
                                 {"count/deployments.apps", "3"},
                                 {"hugepages-2Mi", "1Gi"},
                                 {"configmaps", 5}}),
                    causes);
  EXPECT_TRUE(causes.empty());
  ValidateQuotaHard(*Quota("q", {{"gpus", "1"}, {"requests.nvidia.com/gpu", "1500m"}, {"pods", "-1"}, {"cpu", "lots"}}),
                    causes);
  ASSERT_EQ(causes.size(), 4u);
  EXPECT_EQ(causes[0].field, "spec.hard[cpu]");
  EXPECT_NE(causes[0].message.find("quantities must match the regular expression"), std::string::npos);
  EXPECT_EQ(causes[1].field, "spec.hard[gpus]");
  EXPECT_EQ(causes[1].message, "Invalid value: \"gpus\": must be a standard resource for quota");
  EXPECT_EQ(causes[2].message, "Invalid value: \"-1\": must be greater than or equal to 0");
  EXPECT_EQ(causes[3].field, "spec.hard[requests.nvidia.com/gpu]");
  EXPECT_EQ(causes[3].message, "Invalid value: \"1500m\": must be an integer");
}

}  // namespace
}  // namespace septa::kubesim
