// Every refusal: the field of the virtual pod and what limits it.
#include <gtest/gtest.h>

#include "tests/unit/tenancy/sync/sample_views.h"

namespace septa::tenancy::sync {
namespace {

using nlohmann::json;

Refusal RefusalOf(const json& pod, const VirtualClusterView& view, const std::vector<PodAssignment>& others = {}) {
  auto out = TranslatePodDown(SyncSettings{}, view, pod, others);
  if (!std::holds_alternative<Refusal>(out)) {
    ADD_FAILURE() << "not refused: " << std::get<HostPod>(out).object.dump();
    return {};
  }
  return std::get<Refusal>(out);
}

TEST(SyncRefusal, MoreGpusThanFree) {
  EXPECT_EQ(RefusalOf(SamplePod("t", "4"), SampleView(gpu::Tier::kDedicated)),
            (Refusal{"spec.containers[0].resources.limits[nvidia.com/gpu]",
                     "4 GPUs requested, the reservation has 3 free of 3"}));
}

TEST(SyncRefusal, FreeButNotOnOneNode) {
  EXPECT_EQ(RefusalOf(SamplePod("t", "3"), SampleView(gpu::Tier::kDedicated)).message,
            "3 GPUs requested, the reservation has 3 free of 3, at most 2 on one node");
}

TEST(SyncRefusal, MalformedPods) {
  json pod = SamplePod("t");
  pod["spec"]["tolerations"] = json::array({"not an object"});
  EXPECT_EQ(RefusalOf(pod, SampleView(gpu::Tier::kShared)).message.rfind("malformed pod: ", 0), 0u);
  EXPECT_EQ(RefusalOf(json::array(), SampleView(gpu::Tier::kShared)).message, "a pod is a JSON object");
  pod = SamplePod("t");
  pod["metadata"].erase("uid");
  EXPECT_EQ(RefusalOf(pod, SampleView(gpu::Tier::kShared)).field, "metadata");
}

TEST(SyncRefusal, ReleasingReservation) {
  VirtualClusterView view = SampleView(gpu::Tier::kDedicated);
  view.reservation.releasing = true;
  EXPECT_EQ(RefusalOf(SamplePod("t", "1"), view).message,
            "the virtual cluster's reservation is being released; no GPU pod starts");
}

TEST(SyncRefusal, MigOnADedicatedTier) {
  EXPECT_EQ(RefusalOf(SamplePod("t", "1", "nvidia.com/mig-1g.10gb"), SampleView(gpu::Tier::kDedicated)),
            (Refusal{"spec.containers[0].resources.limits[nvidia.com/mig-1g.10gb]",
                     "the dedicated tier holds no MIG slices; ask for nvidia.com/gpu"}));
}

TEST(SyncRefusal, MigProfileTheReservationDoesNotHold) {
  EXPECT_EQ(RefusalOf(SamplePod("t", "1", "nvidia.com/mig-7g.80gb"), SampleView(gpu::Tier::kIsolated)).message,
            "the reservation holds no 7g.80gb instance (it holds 1g.10gb, 3g.40gb)");
  json pod = SamplePod("t", "1");
  pod["metadata"]["annotations"] = {{"septa.dev/mig-profile", "2g.20gb"}};
  EXPECT_EQ(RefusalOf(pod, SampleView(gpu::Tier::kIsolated)).field, "metadata.annotations[septa.dev/mig-profile]");
}

TEST(SyncRefusal, OtherGpuResources) {
  EXPECT_EQ(RefusalOf(SamplePod("t", "1", "nvidia.com/gpumem"), SampleView(gpu::Tier::kShared)).message,
            "nvidia.com/gpumem is not a GPU resource of the shared tier; ask for nvidia.com/gpu");
}

TEST(SyncRefusal, SharedPodsGetPartOfOneGpu) {
  EXPECT_EQ(RefusalOf(SamplePod("t", "2"), SampleView(gpu::Tier::kShared)).message,
            "the shared tier hands a pod part of one GPU; it asks for 2 in 1 containers");
}

TEST(SyncRefusal, FractionAboveWhatIsFree) {
  json pod = SamplePod("t", "1");
  pod["metadata"]["annotations"] = {{"septa.dev/gpu-fraction", "0.6"}};
  EXPECT_EQ(RefusalOf(pod, SampleView(gpu::Tier::kShared)).message,
            "600 milli-GPU requested, the reservation has 750 free of 750, at most 500 on one GPU");
  pod["metadata"]["annotations"] = {{"septa.dev/gpu-fraction", "1.5"}};
  EXPECT_EQ(RefusalOf(pod, SampleView(gpu::Tier::kShared)).field, "metadata.annotations[septa.dev/gpu-fraction]");
}

TEST(SyncRefusal, FractionsOnAWholeGpuTier) {
  json pod = SamplePod("t", "1");
  pod["metadata"]["annotations"] = {{"septa.dev/gpu-fraction", "0.5"}};
  EXPECT_EQ(RefusalOf(pod, SampleView(gpu::Tier::kDedicated)).field, "metadata.annotations[septa.dev/gpu-fraction]");
}

TEST(SyncRefusal, AnotherRuntimeClass) {
  json pod = SamplePod("t", "1");
  pod["spec"]["runtimeClassName"] = "runc";
  EXPECT_EQ(
      RefusalOf(pod, SampleView(gpu::Tier::kDedicated)),
      (Refusal{"spec.runtimeClassName", "runtime class \"runc\" is not allowed: the tier runs \"kata-nvidia-gpu\""}));
  pod["spec"]["runtimeClassName"] = "kata-nvidia-gpu";  // the tier's own: fine
  EXPECT_TRUE(std::holds_alternative<HostPod>(TranslatePodDown({}, SampleView(gpu::Tier::kDedicated), pod, {})));
}

TEST(SyncRefusal, AnotherScheduler) {
  json pod = SamplePod("t");
  pod["spec"]["schedulerName"] = "kai-scheduler";
  EXPECT_EQ(RefusalOf(pod, SampleView(gpu::Tier::kShared)).field, "spec.schedulerName");
}

TEST(SyncRefusal, SeptaBookkeepingKeys) {
  json pod = SamplePod("t");
  pod["metadata"]["labels"] = {{"septa.dev/tenant", "other"}};
  EXPECT_EQ(RefusalOf(pod, SampleView(gpu::Tier::kShared)),
            (Refusal{"metadata.labels[septa.dev/tenant]", "the key is reserved for the host"}));
  pod = SamplePod("t");
  pod["metadata"]["annotations"] = {{"septa.dev/assignment", "{}"}};
  EXPECT_EQ(RefusalOf(pod, SampleView(gpu::Tier::kShared)).field, "metadata.annotations[septa.dev/assignment]");
}

TEST(SyncRefusal, HostSchedulerKeys) {
  json pod = SamplePod("t");
  pod["metadata"]["annotations"] = {{"gpu-fraction", "1"}};
  EXPECT_EQ(RefusalOf(pod, SampleView(gpu::Tier::kShared)).field, "metadata.annotations[gpu-fraction]");
  pod = SamplePod("t");
  pod["metadata"]["labels"] = {{"kai.scheduler/queue", "someone-else"}};
  EXPECT_EQ(RefusalOf(pod, SampleView(gpu::Tier::kShared)).field, "metadata.labels[kai.scheduler/queue]");
}

TEST(SyncRefusal, TolerationsOfOtherTenantsNodes) {
  json pod = SamplePod("t");
  pod["spec"]["tolerations"] = json::parse(R"([{"operator": "Exists"}])");
  EXPECT_EQ(RefusalOf(pod, SampleView(gpu::Tier::kShared)).field, "spec.tolerations[0]");
  pod["spec"]["tolerations"] = json::parse(R"([{"key": "septa.dev/exclusive-tenant", "operator": "Exists"}])");
  EXPECT_EQ(RefusalOf(pod, SampleView(gpu::Tier::kShared)).message, "taints septa.dev/exclusive-tenant are the host's");
}

// --- Pod Security at baseline (the view's level) and restricted.

TEST(SyncRefusal, HostNamespaces) {
  json pod = SamplePod("t");
  pod["spec"]["hostNetwork"] = true;
  EXPECT_EQ(RefusalOf(pod, SampleView(gpu::Tier::kShared)),
            (Refusal{"spec.hostNetwork", "host namespaces are not allowed at Pod Security level baseline"}));
  pod = SamplePod("t");
  pod["spec"]["hostPID"] = true;
  EXPECT_EQ(RefusalOf(pod, SampleView(gpu::Tier::kShared)).field, "spec.hostPID");
  pod = SamplePod("t");
  pod["spec"]["hostIPC"] = true;
  EXPECT_EQ(RefusalOf(pod, SampleView(gpu::Tier::kShared)).field, "spec.hostIPC");
}

TEST(SyncRefusal, HostPathVolumes) {
  json pod = SamplePod("t");
  pod["spec"]["volumes"] = json::parse(R"([{"name": "root", "hostPath": {"path": "/"}}])");
  EXPECT_EQ(RefusalOf(pod, SampleView(gpu::Tier::kShared)).field, "spec.volumes[0].hostPath");
}

TEST(SyncRefusal, PrivilegedContainers) {
  json pod = SamplePod("t");
  pod["spec"]["initContainers"] =
      json::parse(R"([{"name": "init", "image": "x", "securityContext": {"privileged": true}}])");
  EXPECT_EQ(RefusalOf(pod, SampleView(gpu::Tier::kShared)),
            (Refusal{"spec.initContainers[0].securityContext.privileged",
                     "privileged containers are not allowed at Pod Security level baseline"}));
}

TEST(SyncRefusal, CapabilitiesBeyondBaseline) {
  json pod = SamplePod("t");
  pod["spec"]["containers"][0]["securityContext"] = {{"capabilities", {{"add", {"CHOWN", "SYS_ADMIN"}}}}};
  EXPECT_EQ(RefusalOf(pod, SampleView(gpu::Tier::kShared)).message,
            "capability SYS_ADMIN is beyond the baseline set at Pod Security level baseline");
}

TEST(SyncRefusal, HostPorts) {
  json pod = SamplePod("t");
  pod["spec"]["containers"][0]["ports"] = json::parse(R"([{"containerPort": 80, "hostPort": 80}])");
  EXPECT_EQ(RefusalOf(pod, SampleView(gpu::Tier::kShared)).field, "spec.containers[0].ports[0].hostPort");
}

TEST(SyncRefusal, UnsafeSysctlsSeccompAndProcMount) {
  json pod = SamplePod("t");
  pod["spec"]["securityContext"] = json::parse(R"({"sysctls": [{"name": "net.ipv4.tcp_syncookies", "value": "1"},
                                                               {"name": "kernel.msgmax", "value": "1"}]})");
  EXPECT_EQ(
      RefusalOf(pod, SampleView(gpu::Tier::kShared)),
      (Refusal{"spec.securityContext.sysctls[1]", "sysctl kernel.msgmax is not safe at Pod Security level baseline"}));
  pod = SamplePod("t");
  pod["spec"]["containers"][0]["securityContext"] = json::parse(R"({"seccompProfile": {"type": "Unconfined"}})");
  EXPECT_EQ(RefusalOf(pod, SampleView(gpu::Tier::kShared)).field,
            "spec.containers[0].securityContext.seccompProfile.type");
  pod = SamplePod("t");
  pod["spec"]["containers"][0]["securityContext"] = json::parse(R"({"procMount": "Unmasked"})");
  EXPECT_EQ(RefusalOf(pod, SampleView(gpu::Tier::kShared)).field, "spec.containers[0].securityContext.procMount");
}

// Issue 28: at baseline too, stricter than Pod Security's baseline: the
// node would mount an NFS server past the NetworkPolicy, another tenant's
// cloud disk by its ID, or run git (CVE-2024-10220).
TEST(SyncRefusal, VolumesTheNodeMountsByItselfAtEveryLevelButPrivileged) {
  for (gpu::Tier tier : {gpu::Tier::kShared, gpu::Tier::kExclusive}) {
    for (const char* source : {R"({"nfs": {"server": "n", "path": "/"}})", R"({"gitRepo": {"repository": "r"}})",
                               R"({"awsElasticBlockStore": {"volumeID": "vol-1"}})", R"({"iscsi": {}})"}) {
      json pod = SamplePod("t");
      if (tier == gpu::Tier::kExclusive) MakeRestricted(pod);
      json volume = json::parse(source);
      volume["name"] = "v";
      pod["spec"]["volumes"] = json::array({json{{"name", "scratch"}, {"emptyDir", json::object()}}, volume});
      const Refusal refusal = RefusalOf(pod, SampleView(tier));
      const std::string type = json::parse(source).begin().key();
      EXPECT_EQ(refusal.field, "spec.volumes[1]." + type) << source;
      EXPECT_EQ(refusal.message.rfind("volume type " + type + " is not allowed", 0), 0u) << refusal.message;
    }
  }
}

TEST(SyncRefusal, PrivilegedLevelAllowsThem) {
  json pod = SamplePod("t");
  pod["spec"]["hostNetwork"] = true;
  VirtualClusterView view = SampleView(gpu::Tier::kShared);
  view.psa_level = "privileged";
  EXPECT_TRUE(std::holds_alternative<HostPod>(TranslatePodDown({}, view, pod, {})));
}

TEST(SyncRefusal, RestrictedRequirements) {
  const VirtualClusterView view = SampleView(gpu::Tier::kExclusive);  // restricted
  json pod = SamplePod("t");
  EXPECT_EQ(RefusalOf(pod, view), (Refusal{"spec.containers[0].securityContext.runAsNonRoot",
                                           "must be true (or set on the pod) at Pod Security level restricted"}));
  MakeRestricted(pod);
  pod["spec"]["securityContext"].erase("seccompProfile");
  EXPECT_EQ(RefusalOf(pod, view).field, "spec.containers[0].securityContext.seccompProfile.type");
  MakeRestricted(pod);
  pod["spec"]["containers"][0]["securityContext"].erase("allowPrivilegeEscalation");
  EXPECT_EQ(RefusalOf(pod, view).field, "spec.containers[0].securityContext.allowPrivilegeEscalation");
  MakeRestricted(pod);
  pod["spec"]["containers"][0]["securityContext"]["capabilities"]["drop"] = json::array({"NET_RAW"});
  EXPECT_EQ(RefusalOf(pod, view).field, "spec.containers[0].securityContext.capabilities.drop");
  MakeRestricted(pod);
  pod["spec"]["containers"][0]["securityContext"]["capabilities"]["add"] = json::array({"CHOWN"});
  EXPECT_EQ(RefusalOf(pod, view).message, "only NET_BIND_SERVICE may be added at Pod Security level restricted");
}

// Pod Security baseline "AppArmor" and "SELinux" (and "HostProcess"): the
// options that lift confinement, on the pod and on each container, by
// field or by the legacy annotation.
TEST(SyncRefusal, UnconfinedAppArmorSeLinuxTypesAndHostProcesses) {
  const VirtualClusterView view = SampleView(gpu::Tier::kShared);  // baseline
  json pod = SamplePod("t");
  pod["spec"]["securityContext"] = {{"appArmorProfile", {{"type", "Unconfined"}}}};
  EXPECT_EQ(RefusalOf(pod, view),
            (Refusal{"spec.securityContext.appArmorProfile.type",
                     "AppArmor profile \"Unconfined\" is not allowed (RuntimeDefault or Localhost) at Pod Security "
                     "level baseline"}));
  pod = SamplePod("t");
  pod["spec"]["containers"][0]["securityContext"] = {{"appArmorProfile", {{"type", "Unconfined"}}}};
  EXPECT_EQ(RefusalOf(pod, view).field, "spec.containers[0].securityContext.appArmorProfile.type");
  pod = SamplePod("t");
  pod["metadata"]["annotations"] = {{"container.apparmor.security.beta.kubernetes.io/main", "unconfined"}};
  EXPECT_EQ(RefusalOf(pod, view),
            (Refusal{"metadata.annotations[container.apparmor.security.beta.kubernetes.io/main]",
                     "AppArmor profile unconfined is not allowed (runtime/default or localhost/<profile>) at Pod "
                     "Security level baseline"}));

  pod = SamplePod("t");
  pod["spec"]["securityContext"] = {{"seLinuxOptions", {{"type", "spc_t"}}}};
  EXPECT_EQ(RefusalOf(pod, view),
            (Refusal{"spec.securityContext.seLinuxOptions.type",
                     "SELinux type spc_t is not allowed (container_t, container_init_t, container_kvm_t or "
                     "container_engine_t) at Pod Security level baseline"}));
  pod = SamplePod("t");
  pod["spec"]["initContainers"] = json::parse(
      R"([{"name": "init", "image": "x", "securityContext": {"seLinuxOptions": {"type": "unconfined_t"}}}])");
  EXPECT_EQ(RefusalOf(pod, view).field, "spec.initContainers[0].securityContext.seLinuxOptions.type");
  for (const char* key : {"user", "role"}) {
    pod = SamplePod("t");
    pod["spec"]["containers"][0]["securityContext"] = {{"seLinuxOptions", {{key, "system_u"}}}};
    EXPECT_EQ(RefusalOf(pod, view).field, std::string("spec.containers[0].securityContext.seLinuxOptions.") + key);
  }
  pod = SamplePod("t");
  pod["spec"]["containers"][0]["securityContext"] = {{"windowsOptions", {{"hostProcess", true}}}};
  EXPECT_EQ(RefusalOf(pod, view).field, "spec.containers[0].securityContext.windowsOptions.hostProcess");

  // What baseline allows: the runtime's profile, a node's own, the container SELinux types with a level.
  json allowed = SamplePod("t");
  allowed["metadata"]["annotations"] = {
      {"container.apparmor.security.beta.kubernetes.io/main", "localhost/k8s-apparmor-example"}};
  allowed["spec"]["securityContext"] = {{"appArmorProfile", {{"type", "RuntimeDefault"}}},
                                        {"seLinuxOptions", {{"type", "container_t"}, {"level", "s0:c123,c456"}}}};
  allowed["spec"]["containers"][0]["securityContext"] = {
      {"appArmorProfile", {{"type", "Localhost"}, {"localhostProfile", "k8s-apparmor-example"}}},
      {"seLinuxOptions", {{"type", "container_engine_t"}}}};
  EXPECT_TRUE(std::holds_alternative<HostPod>(TranslatePodDown({}, view, allowed, {})));
  VirtualClusterView privileged = view;
  privileged.psa_level = "privileged";
  EXPECT_TRUE(std::holds_alternative<HostPod>(TranslatePodDown({}, privileged, pod, {})));
}

// Besides its GPUs a pod asks only for what every node has: any other
// extended resource is a device the reservation does not hold.
TEST(SyncRefusal, ExtendedResourcesTheTierDoesNotGrant) {
  json pod = SamplePod("t");
  pod["spec"]["containers"][0]["resources"] = {{"limits", {{"cpu", "1"}, {"amd.com/gpu", "1"}}}};
  EXPECT_EQ(RefusalOf(pod, SampleView(gpu::Tier::kShared)),
            (Refusal{"spec.containers[0].resources.limits[amd.com/gpu]",
                     "container \"main\" asks for amd.com/gpu, which the shared tier does not grant: a pod may ask "
                     "for cpu, memory, ephemeral-storage, hugepages-<size> and nvidia.com/gpu"}));
  pod = SamplePod("t", "1");
  pod["spec"]["initContainers"] =
      json::parse(R"([{"name": "setup", "image": "x", "resources": {"requests": {"rdma/hca": "1"}}}])");
  EXPECT_EQ(RefusalOf(pod, SampleView(gpu::Tier::kIsolated)),
            (Refusal{"spec.initContainers[0].resources.requests[rdma/hca]",
                     "container \"setup\" asks for rdma/hca, which the isolated tier does not grant: a pod may ask "
                     "for cpu, memory, ephemeral-storage, hugepages-<size> and nvidia.com/gpu or "
                     "nvidia.com/mig-<held profile>"}));
  pod = SamplePod("t");
  pod["spec"]["resourceClaims"] = json::parse(R"([{"name": "gpu", "resourceClaimTemplateName": "any-gpu"}])");
  EXPECT_EQ(RefusalOf(pod, SampleView(gpu::Tier::kDedicated)).field, "spec.resourceClaims");

  json plain = SamplePod("t", "1");
  plain["spec"]["containers"][0]["resources"]["limits"].update(
      {{"cpu", "2"}, {"memory", "4Gi"}, {"ephemeral-storage", "10Gi"}, {"hugepages-2Mi", "1Gi"}});
  EXPECT_TRUE(std::holds_alternative<HostPod>(TranslatePodDown({}, SampleView(gpu::Tier::kDedicated), plain, {})));
}

// The host places a pod inside the reservation; a virtual node name would
// be dropped, and the pod run elsewhere than it asked.
TEST(SyncRefusal, ANodeNameTheTenantWrote) {
  json pod = SamplePod("t", "1");
  pod["spec"]["nodeName"] = "h100-1";
  EXPECT_EQ(RefusalOf(pod, SampleView(gpu::Tier::kDedicated)),
            (Refusal{"spec.nodeName", "the host places the pod inside the reservation; a pod may not name its node"}));
}

// No rename points these into the virtual cluster: a cluster-scoped object
// is the host's, a pod certificate the host pod's identity.
TEST(SyncRefusal, ProjectedSourcesOfTheHostsObjectsOrIdentity) {
  json pod = SamplePod("t");
  pod["spec"]["volumes"] = json::parse(R"([{"name": "p", "projected": {"sources": [
      {"configMap": {"name": "a"}}, {"clusterTrustBundle": {"signerName": "example.com/mesh", "path": "ca.pem"}}]}}])");
  EXPECT_EQ(RefusalOf(pod, SampleView(gpu::Tier::kShared)).field,
            "spec.volumes[0].projected.sources[1].clusterTrustBundle");
  pod["spec"]["volumes"][0]["projected"]["sources"][1] =
      json::parse(R"({"podCertificate": {"signerName": "example.com/mesh", "keyType": "ED25519"}})");
  EXPECT_EQ(RefusalOf(pod, SampleView(gpu::Tier::kShared)),
            (Refusal{"spec.volumes[0].projected.sources[1].podCertificate",
                     "a pod certificate would be issued to the host pod's identity, not the virtual pod's"}));
}

}  // namespace
}  // namespace septa::tenancy::sync
