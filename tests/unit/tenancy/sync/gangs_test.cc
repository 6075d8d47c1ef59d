// Gangs: the annotations a tenant sets, what each scheduler gets on the
// host pod, KAI's PodGroup, and every refusal.
#include "tenancy/sync/gangs.h"

#include <gtest/gtest.h>

#include "tenancy/sync/bookkeeping.h"
#include "tests/unit/tenancy/sync/sample_views.h"

namespace septa::tenancy::sync {
namespace {

using nlohmann::json;

json GangPod(const std::string& gang, const std::string& size) {
  json pod = SamplePod("worker-0");
  if (!gang.empty()) pod["metadata"]["annotations"][std::string(kGangAnnotation)] = gang;
  if (!size.empty()) pod["metadata"]["annotations"][std::string(kGangSizeAnnotation)] = size;
  return pod;
}

SyncSettings With(host::Scheduler scheduler) {
  SyncSettings settings;
  settings.scheduler = scheduler;
  return settings;
}

HostPod Translated(const SyncSettings& settings, const json& pod) {
  auto out = TranslatePodDown(settings, SampleView(gpu::Tier::kShared), pod, {});
  if (auto* refusal = std::get_if<Refusal>(&out)) ADD_FAILURE() << refusal->field << ": " << refusal->message;
  return std::holds_alternative<HostPod>(out) ? std::get<HostPod>(out) : HostPod{};
}

TEST(SyncGangs, KaiGetsThePodGroupNameAndNoGroupingOfItsOwn) {
  const json pod = GangPod("allreduce", "4");
  EXPECT_EQ(std::get<Gang>(GangOf(With(host::Scheduler::kKai), pod)), (Gang{"allreduce", 4}));
  const json host = Translated(With(host::Scheduler::kKai), pod).object;
  EXPECT_EQ(host["metadata"]["annotations"]["pod-group-name"], "allreduce-x-team-x-train");
  EXPECT_EQ(host["metadata"]["annotations"]["kai.scheduler/skip-podgrouper"], "true");
  EXPECT_EQ(HostGangOf(host), "allreduce-x-team-x-train");
  EXPECT_FALSE(host["metadata"]["annotations"].contains(std::string(kGangAnnotation)))
      << "the tenant's input is read, not copied: septa.dev/ keys are the host's";

  const json group = HostPodGroup(SampleView(gpu::Tier::kShared), "team", Gang{"allreduce", 4});
  EXPECT_EQ(group["apiVersion"], "scheduling.run.ai/v2alpha2");
  EXPECT_EQ(group["metadata"]["name"], "allreduce-x-team-x-train");
  EXPECT_EQ(group["metadata"]["namespace"], "septa-acme-x-train");
  EXPECT_EQ(group["metadata"]["labels"][std::string(kTenantLabel)], "acme");
  EXPECT_EQ(group["spec"], json({{"minMember", 4}, {"queue", "septa-acme-x-train"}}));
  EXPECT_TRUE(PodGroupUpToDate(group, group));
  json resized = group;
  resized["spec"]["minMember"] = 2;
  EXPECT_FALSE(PodGroupUpToDate(group, resized));
}

TEST(SyncGangs, KueueGetsItsPlainPodGroupKeys) {
  const json host = Translated(With(host::Scheduler::kKueue), GangPod("allreduce", "4")).object;
  EXPECT_EQ(host["metadata"]["labels"]["kueue.x-k8s.io/pod-group-name"], "allreduce-x-team-x-train");
  EXPECT_EQ(host["metadata"]["annotations"]["kueue.x-k8s.io/pod-group-total-count"], "4");
  EXPECT_FALSE(host["metadata"]["annotations"].contains("pod-group-name"));
}

TEST(SyncGangs, APodWithoutAGangIsItsOwn) {
  EXPECT_TRUE(std::holds_alternative<std::monostate>(GangOf(With(host::Scheduler::kKai), SamplePod("solo"))));
  const json host = Translated(With(host::Scheduler::kKai), SamplePod("solo")).object;
  EXPECT_FALSE(host["metadata"].value("annotations", json::object()).contains("pod-group-name"));
  EXPECT_EQ(HostGangOf(host), "");
}

TEST(SyncGangs, BadGangsAndGangsNoSchedulerHonoursAreRefusedNamingTheAnnotation) {
  const SyncSettings kai = With(host::Scheduler::kKai);
  const std::string name_field = "metadata.annotations[septa.dev/gang]";
  const std::string size_field = "metadata.annotations[septa.dev/gang-size]";
  for (const auto& [gang, size, field] : std::vector<std::tuple<std::string, std::string, std::string>>{
           {"", "4", name_field},
           {"Not_A_Label", "4", name_field},
           {std::string(41, 'g'), "4", name_field},
           {"allreduce", "", size_field},
           {"allreduce", "0", size_field},
           {"allreduce", "four", size_field},
           {"allreduce", "4.5", size_field},
           {"allreduce", "10001", size_field},
       }) {
    auto out = GangOf(kai, GangPod(gang, size));
    ASSERT_TRUE(std::holds_alternative<Refusal>(out)) << gang << " " << size;
    EXPECT_EQ(std::get<Refusal>(out).field, field) << gang << " " << size;
  }
  for (const SyncSettings& unable : {With(host::Scheduler::kDefault), [] {
                                       SyncSettings bind = With(host::Scheduler::kKai);
                                       bind.bind_node_name = true;
                                       return bind;
                                     }()}) {
    auto out = TranslatePodDown(unable, SampleView(gpu::Tier::kShared), GangPod("allreduce", "4"), {});
    ASSERT_TRUE(std::holds_alternative<Refusal>(out));
    EXPECT_EQ(std::get<Refusal>(out).field, name_field);
    EXPECT_NE(std::get<Refusal>(out).message.find("KAI or Kueue"), std::string::npos);
  }
  // The host schedulers' own keys stay the host's.
  json forged = SamplePod("worker-0");
  forged["metadata"]["annotations"]["pod-group-name"] = "someone-elses";
  auto out = TranslatePodDown(kai, SampleView(gpu::Tier::kShared), forged, {});
  ASSERT_TRUE(std::holds_alternative<Refusal>(out));
  EXPECT_EQ(std::get<Refusal>(out).field, "metadata.annotations[pod-group-name]");
}

}  // namespace
}  // namespace septa::tenancy::sync
