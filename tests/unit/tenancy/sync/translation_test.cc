// TranslatePodDown: metadata, references, downward API, service account
// token, API discovery, DNS, hostname, and each tier patch.
#include <gtest/gtest.h>

#include "tenancy/host/render.h"
#include "tenancy/sync/bookkeeping.h"
#include "tenancy/sync/pod_references.h"
#include "tests/unit/tenancy/sync/sample_views.h"

namespace septa::tenancy::sync {
namespace {

using nlohmann::json;

HostPod Translate(const json& pod, const VirtualClusterView& view, const SyncSettings& settings = {},
                  const std::vector<PodAssignment>& others = {}) {
  auto out = TranslatePodDown(settings, view, pod, others);
  if (auto* refusal = std::get_if<Refusal>(&out)) {
    ADD_FAILURE() << refusal->field << ": " << refusal->message;
    return {};
  }
  return std::get<HostPod>(out);
}

const json& Env(const json& container, const std::string& name) {
  static const json kMissing;
  for (const json& var : container["env"]) {
    if (var["name"] == name) return var;
  }
  return kMissing;
}

TEST(SyncTranslate, MetadataNamesBookkeepingAndCopiedKeys) {
  json pod = SamplePod("web");
  pod["metadata"]["labels"] = {{"app", "web"}, {"tier", "front"}};
  pod["metadata"]["annotations"] = {{"note", "x"}};
  pod["metadata"]["ownerReferences"] = json::array({{{"kind", "ReplicaSet"}, {"name", "web-1"}, {"uid", "rs"}}});
  pod["metadata"]["resourceVersion"] = "7";
  pod["spec"]["priorityClassName"] = "high";
  pod["spec"]["priority"] = 1000;
  pod["status"] = {{"phase", "Running"}};
  const json host = Translate(pod, SampleView(gpu::Tier::kShared)).object;
  const json& meta = host["metadata"];
  EXPECT_EQ(meta["name"], "web-x-team-x-train");
  EXPECT_EQ(meta["namespace"], "septa-acme-x-train");
  EXPECT_EQ(meta["labels"]["app"], "web");
  EXPECT_EQ(meta["labels"]["septa.dev/synced"], "true");
  EXPECT_EQ(meta["labels"]["septa.dev/namespace"], "team");
  EXPECT_EQ(meta["annotations"]["note"], "x");
  EXPECT_EQ(meta["annotations"]["septa.dev/copied-labels"], "app,tier");
  EXPECT_EQ(meta["annotations"]["septa.dev/copied-annotations"], "note");
  EXPECT_EQ(meta["annotations"]["septa.dev/object-labels"], "app=\"web\"\ntier=\"front\"");
  EXPECT_EQ(json::parse(meta["annotations"]["septa.dev/object-owner-references"].get<std::string>())[0]["name"],
            "web-1");
  EXPECT_FALSE(meta.contains("ownerReferences"));
  EXPECT_FALSE(meta.contains("resourceVersion"));
  EXPECT_FALSE(host.contains("status"));
  for (const char* gone : {"priorityClassName", "priority"}) EXPECT_FALSE(host["spec"].contains(gone));
  EXPECT_EQ(VirtualRefOf(host, "acme", "train"), (VirtualRef{"team", "web", "uid-web"}));
}

TEST(SyncTranslate, ReferencesAreRenamed) {
  json pod = SamplePod("web");
  pod["spec"]["volumes"] = json::parse(R"([
      {"name": "cfg", "configMap": {"name": "settings"}},
      {"name": "sec", "secret": {"secretName": "creds"}},
      {"name": "data", "persistentVolumeClaim": {"claimName": "data"}},
      {"name": "proj", "projected": {"sources": [{"configMap": {"name": "a"}}, {"secret": {"name": "b"}}]}},
      {"name": "csi", "csi": {"driver": "x", "nodePublishSecretRef": {"name": "csi-sec"}}},
      {"name": "rbd", "rbd": {"image": "i", "secretRef": {"name": "rbd-sec"}}},
      {"name": "scratch", "ephemeral": {"volumeClaimTemplate": {}}}])");
  pod["spec"]["imagePullSecrets"] = json::parse(R"([{"name": "pull"}])");
  pod["spec"]["containers"][0]["envFrom"] =
      json::parse(R"([{"configMapRef": {"name": "env-cm"}}, {"secretRef": {"name": "env-sec"}}])");
  pod["spec"]["containers"][0]["env"] =
      json::parse(R"([{"name": "K", "valueFrom": {"secretKeyRef": {"name": "one", "key": "k"}}}])");
  VirtualClusterView privileged = SampleView(gpu::Tier::kShared);  // rbd: refused below privileged
  privileged.psa_level = "privileged";
  const json spec = Translate(pod, privileged).object["spec"];
  EXPECT_EQ(spec["volumes"][0]["configMap"]["name"], "settings-x-team-x-train");
  EXPECT_EQ(spec["volumes"][1]["secret"]["secretName"], "creds-x-team-x-train");
  EXPECT_EQ(spec["volumes"][2]["persistentVolumeClaim"]["claimName"], "data-x-team-x-train");
  EXPECT_EQ(spec["volumes"][3]["projected"]["sources"][0]["configMap"]["name"], "a-x-team-x-train");
  EXPECT_EQ(spec["volumes"][3]["projected"]["sources"][1]["secret"]["name"], "b-x-team-x-train");
  EXPECT_EQ(spec["volumes"][4]["csi"]["nodePublishSecretRef"]["name"], "csi-sec-x-team-x-train");
  EXPECT_EQ(spec["volumes"][5]["rbd"]["secretRef"]["name"], "rbd-sec-x-team-x-train");
  EXPECT_EQ(spec["volumes"][6],
            json({{"name", "scratch"}, {"persistentVolumeClaim", {{"claimName", "web-scratch-x-team-x-train"}}}}));
  EXPECT_EQ(spec["imagePullSecrets"][0]["name"], "pull-x-team-x-train");
  const json& c = spec["containers"][0];
  EXPECT_EQ(c["envFrom"][0]["configMapRef"]["name"], "env-cm-x-team-x-train");
  EXPECT_EQ(c["envFrom"][1]["secretRef"]["name"], "env-sec-x-team-x-train");
  EXPECT_EQ(Env(c, "K")["valueFrom"]["secretKeyRef"]["name"], "one-x-team-x-train");
}

// Every other object name a volume source of the Pod API holds: the
// secrets of the storage plugins and glusterfs' Endpoints. Left as written,
// they named the host namespace's own objects (another pod's token Secret).
// Such volumes are refused below privileged (the node mounts them by
// itself); a tier an admin made privileged gets them renamed.
TEST(SyncTranslate, EveryVolumeSourcesReferenceIsRenamed) {
  VirtualClusterView privileged = SampleView(gpu::Tier::kShared);
  privileged.psa_level = "privileged";
  json pod = SamplePod("web");
  pod["spec"]["volumes"] = json::parse(R"([
      {"name": "azure", "azureFile": {"secretName": "azure-sec", "shareName": "s"}},
      {"name": "flex", "flexVolume": {"driver": "example/flex", "secretRef": {"name": "flex-sec"}}},
      {"name": "scaleio", "scaleIO": {"gateway": "g", "system": "s", "secretRef": {"name": "scaleio-sec"}}},
      {"name": "storageos", "storageos": {"volumeName": "v", "secretRef": {"name": "storageos-sec"}}},
      {"name": "cephfs", "cephfs": {"monitors": ["m"], "secretRef": {"name": "ceph-sec"}}},
      {"name": "iscsi", "iscsi": {"targetPortal": "t", "iqn": "i", "lun": 0, "secretRef": {"name": "iscsi-sec"}}},
      {"name": "gluster", "glusterfs": {"endpoints": "gluster-eps", "path": "vol"}}])");
  const json spec = Translate(pod, privileged).object["spec"];
  EXPECT_EQ(spec["volumes"][0]["azureFile"]["secretName"], "azure-sec-x-team-x-train");
  EXPECT_EQ(spec["volumes"][1]["flexVolume"]["secretRef"]["name"], "flex-sec-x-team-x-train");
  EXPECT_EQ(spec["volumes"][2]["scaleIO"]["secretRef"]["name"], "scaleio-sec-x-team-x-train");
  EXPECT_EQ(spec["volumes"][3]["storageos"]["secretRef"]["name"], "storageos-sec-x-team-x-train");
  EXPECT_EQ(spec["volumes"][4]["cephfs"]["secretRef"]["name"], "ceph-sec-x-team-x-train");
  EXPECT_EQ(spec["volumes"][5]["iscsi"]["secretRef"]["name"], "iscsi-sec-x-team-x-train");
  // The host copy of the tenant's Endpoints, which lead to its own pods only.
  EXPECT_EQ(spec["volumes"][6]["glusterfs"]["endpoints"], "gluster-eps-x-team-x-train");
  // The secrets are copied down under those names; the Endpoints are the service syncer's.
  std::set<ObjectRef> secrets;
  for (const char* name : {"azure-sec", "flex-sec", "scaleio-sec", "storageos-sec", "ceph-sec", "iscsi-sec"})
    secrets.insert({CopiedKind::kSecret, "team", name});
  EXPECT_EQ(ReferencedObjects(pod), secrets);
}

TEST(SyncTranslate, DownwardApiReadsTheVirtualValues) {
  json pod = SamplePod("web");
  pod["spec"]["containers"][0]["env"] = {
      {{"name", "NAME"}, {"valueFrom", {{"fieldRef", {{"fieldPath", "metadata.name"}}}}}},
      {{"name", "SA"}, {"valueFrom", {{"fieldRef", {{"fieldPath", "spec.serviceAccountName"}}}}}},
      {{"name", "IP"}, {"valueFrom", {{"fieldRef", {{"fieldPath", "status.podIP"}}}}}}};
  pod["spec"]["volumes"] = json::parse(R"([{"name": "info", "downwardAPI": {"items": [
      {"path": "labels", "fieldRef": {"fieldPath": "metadata.labels"}},
      {"path": "uid", "fieldRef": {"fieldPath": "metadata.uid"}}]}}])");
  const json spec = Translate(pod, SampleView(gpu::Tier::kShared)).object["spec"];
  const json& c = spec["containers"][0];
  EXPECT_EQ(Env(c, "NAME")["valueFrom"]["fieldRef"]["fieldPath"], "metadata.annotations['septa.dev/object-name']");
  EXPECT_EQ(Env(c, "SA")["valueFrom"]["fieldRef"]["fieldPath"],
            "metadata.annotations['septa.dev/object-service-account']");
  EXPECT_EQ(Env(c, "IP")["valueFrom"]["fieldRef"]["fieldPath"], "status.podIP");
  EXPECT_EQ(spec["volumes"][0]["downwardAPI"]["items"][0]["fieldRef"]["fieldPath"],
            "metadata.annotations['septa.dev/object-labels']");
  EXPECT_EQ(spec["volumes"][0]["downwardAPI"]["items"][1]["fieldRef"]["fieldPath"],
            "metadata.annotations['septa.dev/object-uid']");
}

TEST(SyncTranslate, ServiceAccountTokenIsMountedFromTheSyncersSecret) {
  json pod = SamplePod("web");
  pod["spec"]["serviceAccountName"] = "trainer";
  const json host = Translate(pod, SampleView(gpu::Tier::kShared)).object;
  const json& spec = host["spec"];
  EXPECT_EQ(spec["serviceAccountName"], "septa-workload");
  EXPECT_EQ(spec["automountServiceAccountToken"], false);
  EXPECT_EQ(host["metadata"]["annotations"]["septa.dev/object-service-account"], "trainer");
  EXPECT_EQ(spec["volumes"][0]["secret"]["secretName"], "septa-sa-token-uid-web");
  EXPECT_EQ(spec["containers"][0]["volumeMounts"][0]["mountPath"], "/var/run/secrets/kubernetes.io/serviceaccount");
  EXPECT_TRUE(MountsServiceAccountToken(pod));

  pod["spec"]["automountServiceAccountToken"] = false;
  EXPECT_FALSE(MountsServiceAccountToken(pod));
  EXPECT_FALSE(Translate(pod, SampleView(gpu::Tier::kShared)).object["spec"].contains("volumes"));
}

TEST(SyncTranslate, TokenProjectionReadsTheSecretAndItsExpirationIsCapped) {
  json pod = SamplePod("web");
  pod["spec"]["volumes"] = json::parse(R"([{"name": "kube-api-access-abcde", "projected": {"sources": [
      {"serviceAccountToken": {"expirationSeconds": 7200, "path": "token"}},
      {"configMap": {"name": "kube-root-ca.crt"}}]}}])");
  const json spec = Translate(pod, SampleView(gpu::Tier::kShared)).object["spec"];
  ASSERT_EQ(spec["volumes"].size(), 1u);
  EXPECT_EQ(
      spec["volumes"][0]["projected"]["sources"][0],
      json::parse(R"({"secret": {"name": "septa-sa-token-uid-web", "items": [{"key": "token", "path": "token"}]}})"));
  EXPECT_EQ(spec["volumes"][0]["projected"]["sources"][1]["configMap"]["name"], "kube-root-ca.crt-x-team-x-train");
  EXPECT_EQ(RequestedTokenExpiration(pod), 7200);
  TrustTier tier;
  tier.credential_ttl_max_seconds = 3600;
  EXPECT_EQ(TokenExpirationSeconds(7200, tier), 3600);
  EXPECT_EQ(TokenExpirationSeconds(std::nullopt, tier), 3600);
  tier.credential_ttl_max_seconds = 86400;
  EXPECT_EQ(TokenExpirationSeconds(std::nullopt, tier), 3607);
  EXPECT_EQ(TokenExpirationSeconds(60, tier), 600);
  tier.credential_ttl_max_seconds = 0;
  EXPECT_EQ(TokenExpirationSeconds(315360000, tier), 315360000);
}

TEST(SyncTranslate, ApiServerDiscoveryPointsAtTheVirtualApi) {
  json pod = SamplePod("web");
  pod["spec"]["containers"][0]["env"] = json::parse(R"([{"name": "KUBERNETES_SERVICE_HOST", "value": "mine"}])");
  SyncSettings settings;
  settings.virtual_api_host = "10.0.0.7";
  settings.virtual_api_port = 443;
  const json spec = Translate(pod, SampleView(gpu::Tier::kShared), settings).object["spec"];
  const json& c = spec["containers"][0];
  EXPECT_EQ(spec["enableServiceLinks"], false);
  EXPECT_EQ(Env(c, "KUBERNETES_SERVICE_HOST")["value"], "mine");
  EXPECT_EQ(Env(c, "KUBERNETES_SERVICE_PORT")["value"], "443");
  EXPECT_EQ(Env(c, "KUBERNETES_PORT")["value"], "tcp://10.0.0.7:443");
  EXPECT_EQ(Env(c, "KUBERNETES_PORT_443_TCP_ADDR")["value"], "10.0.0.7");
  EXPECT_EQ(spec["hostAliases"][0]["ip"], "10.0.0.7");
  EXPECT_EQ(spec["hostAliases"][0]["hostnames"].back(), "kubernetes.default.svc.cluster.local");

  settings.virtual_api_host = "vcp.septa.svc";  // a name: no hostAliases
  EXPECT_FALSE(Translate(pod, SampleView(gpu::Tier::kShared), settings).object["spec"].contains("hostAliases"));
}

TEST(SyncTranslate, DnsIsRewrittenForClusterFirstOnly) {
  json pod = SamplePod("web");
  pod["spec"]["dnsConfig"] = json::parse(R"({"nameservers": ["1.1.1.1"], "searches": ["corp.example"],
                                             "options": [{"name": "timeout", "value": "2"}]})");
  SyncSettings settings;
  settings.dns_nameserver = "10.96.0.53";
  const json spec = Translate(pod, SampleView(gpu::Tier::kShared), settings).object["spec"];
  EXPECT_EQ(spec["dnsPolicy"], "None");
  EXPECT_EQ(spec["dnsConfig"]["nameservers"], json({"10.96.0.53", "1.1.1.1"}));
  EXPECT_EQ(spec["dnsConfig"]["searches"],
            json({"team.svc.cluster.local", "svc.cluster.local", "cluster.local", "corp.example"}));
  EXPECT_EQ(spec["dnsConfig"]["options"],
            json::parse(R"([{"name": "ndots", "value": "5"}, {"name": "timeout", "value": "2"}])"));

  pod["spec"]["dnsPolicy"] = "Default";
  EXPECT_EQ(Translate(pod, SampleView(gpu::Tier::kShared), settings).object["spec"]["dnsPolicy"], "Default");
  pod["spec"]["dnsPolicy"] = "ClusterFirst";
  EXPECT_EQ(Translate(pod, SampleView(gpu::Tier::kShared)).object["spec"]["dnsPolicy"], "ClusterFirst");
}

TEST(SyncTranslate, HostnameIsTheVirtualNameAsALabel) {
  json pod = SamplePod("web.v1-");
  pod["spec"]["subdomain"] = "svc";
  json spec = Translate(pod, SampleView(gpu::Tier::kShared)).object["spec"];
  EXPECT_EQ(spec["hostname"], "web-v1");
  EXPECT_FALSE(spec.contains("subdomain"));
  const std::string long_name = std::string(62, 'a') + ".b";
  spec = Translate(SamplePod(long_name), SampleView(gpu::Tier::kShared)).object["spec"];
  EXPECT_EQ(spec["hostname"], std::string(62, 'a'));  // 63 cut, '.' -> '-', the trailing '-' trimmed
}

// --- Tier patches: the virtual pod's resources -> the host pod's.

TEST(SyncTierPatch, IsolatedRewritesToTheLargestFreeMigProfile) {
  SyncSettings settings;
  const HostPod out = Translate(SamplePod("t", "1"), SampleView(gpu::Tier::kIsolated), settings);
  const json& spec = out.object["spec"];
  EXPECT_EQ(spec["containers"][0]["resources"]["limits"], json({{"nvidia.com/mig-3g.40gb", "1"}}));
  EXPECT_EQ(spec["runtimeClassName"], "nvidia");
  EXPECT_EQ(spec["schedulerName"], "kai-scheduler");
  EXPECT_EQ(out.object["metadata"]["labels"]["kai.scheduler/queue"], "septa-acme-x-train");
  EXPECT_EQ(out.assignment.mig_profile, "3g.40gb");
  EXPECT_EQ(out.assignment.mig_count, 1);
}

TEST(SyncTierPatch, IsolatedAnnotationChoosesTheProfile) {
  json pod = SamplePod("t", "1");
  pod["metadata"]["annotations"] = {{"septa.dev/mig-profile", "1g.10gb"}};
  const HostPod out = Translate(pod, SampleView(gpu::Tier::kIsolated));
  EXPECT_EQ(out.object["spec"]["containers"][0]["resources"]["limits"], json({{"nvidia.com/mig-1g.10gb", "1"}}));
  EXPECT_EQ(out.assignment.node, "h100-0");
  EXPECT_FALSE(out.object["metadata"]["annotations"].contains("septa.dev/mig-profile"));
}

TEST(SyncTierPatch, IsolatedAcceptsAHeldProfileByName) {
  const HostPod out = Translate(SamplePod("t", "1", "nvidia.com/mig-1g.10gb"), SampleView(gpu::Tier::kIsolated));
  EXPECT_EQ(out.object["spec"]["containers"][0]["resources"]["limits"], json({{"nvidia.com/mig-1g.10gb", "1"}}));
  EXPECT_EQ(out.assignment.mig_profile, "1g.10gb");
}

TEST(SyncTierPatch, SharedOnKaiBecomesAFractionAnnotation) {
  json pod = SamplePod("t", "1");
  pod["metadata"]["annotations"] = {{"septa.dev/gpu-fraction", "0.2"}};
  SyncSettings settings;
  const HostPod out = Translate(pod, SampleView(gpu::Tier::kShared), settings);
  EXPECT_EQ(out.object["metadata"]["annotations"]["gpu-fraction"], "0.2");
  EXPECT_FALSE(out.object["spec"]["containers"][0].contains("resources"));
  EXPECT_EQ(out.object["spec"]["schedulerName"], "kai-scheduler");
  EXPECT_EQ(out.assignment.milli_gpu, 200);
  EXPECT_EQ(out.assignment.node, "h100-0");
  EXPECT_EQ(out.assignment.gpus, std::vector<int>{1});  // best fit: the 250 share

  pod["metadata"]["annotations"] = {{"septa.dev/gpu-memory-mib", "10240"}};
  const HostPod memory = Translate(pod, SampleView(gpu::Tier::kShared), settings);
  EXPECT_EQ(memory.object["metadata"]["annotations"]["gpu-memory"], "10240");
  EXPECT_EQ(memory.assignment.gpu_memory_mib, 10240);
  EXPECT_EQ(memory.assignment.milli_gpu, 125);  // half of the 250 share's 20480 MiB
}

TEST(SyncTierPatch, SharedOnHamiBecomesVgpuResourcesPinnedByUuid) {
  SyncSettings settings;
  settings.fraction_backend = FractionBackend::kHami;
  settings.scheduler = host::Scheduler::kDefault;
  const HostPod out = Translate(SamplePod("t", "1"), SampleView(gpu::Tier::kShared), settings);
  // 250 milli of the GPU 1 share (250 milli, 20480 MiB): all of its memory.
  EXPECT_EQ(out.object["spec"]["containers"][0]["resources"]["limits"],
            json({{"nvidia.com/gpu", "1"}, {"nvidia.com/gpumem", "20480"}, {"nvidia.com/gpucores", "25"}}));
  EXPECT_EQ(out.object["metadata"]["annotations"]["nvidia.com/use-gpuuuid"], "GPU-h100-0-1");
  EXPECT_FALSE(out.object["spec"].contains("schedulerName"));
  EXPECT_EQ(out.assignment.gpu_memory_mib, 20480);

  // A pool that tracks no GPU memory: the memory limit is a percentage.
  VirtualClusterView untracked = SampleView(gpu::Tier::kShared);
  for (ReservedShare& share : untracked.reservation.shares) share.gpu_memory_mib = 0;
  EXPECT_EQ(Translate(SamplePod("t", "1"), untracked, settings).object["spec"]["containers"][0]["resources"]["limits"],
            json({{"nvidia.com/gpu", "1"}, {"nvidia.com/gpumem-percentage", "25"}, {"nvidia.com/gpucores", "25"}}));
}

TEST(SyncTierPatch, DedicatedPinsWholeGpusOnOneNode) {
  SyncSettings settings;
  settings.scheduler = host::Scheduler::kKueue;
  const HostPod out = Translate(SamplePod("t", "2"), SampleView(gpu::Tier::kDedicated), settings);
  const json& spec = out.object["spec"];
  EXPECT_EQ(spec["containers"][0]["resources"]["limits"], json({{"nvidia.com/gpu", "2"}}));
  EXPECT_EQ(spec["runtimeClassName"], "kata-nvidia-gpu");
  EXPECT_EQ(out.object["metadata"]["labels"]["kueue.x-k8s.io/queue-name"], "septa");
  EXPECT_EQ(out.object["metadata"]["labels"]["kueue.x-k8s.io/priority-class"], "septa-acme-x-train");
  EXPECT_EQ(out.assignment.node, "h100-0");
  EXPECT_EQ(out.assignment.gpus, (std::vector<int>{2, 3}));
  EXPECT_EQ(
      spec["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"],
      json::parse(R"([{"matchExpressions":[{"key":"kubernetes.io/hostname","operator":"In","values":["h100-0"]}]}])"));
}

// As kube-scheduler counts a pod: containers and sidecars (init containers
// with restartPolicy Always) run together and add up; a plain init
// container runs beside the sidecars started before it.
TEST(SyncTierPatch, SidecarGpusAddUpAsTheHostCountsThem) {
  const json sidecar = {{"name", "proxy"},
                        {"image", "x"},
                        {"restartPolicy", "Always"},
                        {"resources", {{"limits", {{"nvidia.com/gpu", "1"}}}}}};
  const json warmup = {{"name", "warm"}, {"image", "x"}, {"resources", {{"limits", {{"nvidia.com/gpu", "2"}}}}}};
  json pod = SamplePod("t", "1");
  pod["spec"]["initContainers"] = json::array({sidecar});
  const HostPod out = Translate(pod, SampleView(gpu::Tier::kDedicated));
  EXPECT_EQ(out.assignment.gpus, (std::vector<int>{2, 3})) << "the sidecar's GPU and the container's";
  EXPECT_EQ(out.object["spec"]["initContainers"][0]["resources"]["limits"], json({{"nvidia.com/gpu", "1"}}));

  // A plain init container before the sidecar runs alone: max(2, 1 + 1).
  pod["spec"]["initContainers"] = json::array({warmup, sidecar});
  EXPECT_EQ(Translate(pod, SampleView(gpu::Tier::kDedicated)).assignment.gpus, (std::vector<int>{2, 3}));
  // After it, beside it: 1 + 2 GPUs at once, more than one node has.
  pod["spec"]["initContainers"] = json::array({sidecar, warmup});
  auto refused = TranslatePodDown({}, SampleView(gpu::Tier::kDedicated), pod, {});
  ASSERT_TRUE(std::holds_alternative<Refusal>(refused));
  EXPECT_EQ(std::get<Refusal>(refused).message,
            "3 GPUs requested, the reservation has 3 free of 3, at most 2 on one node");

  // MIG instances likewise: two 3g.40gb, where each node holds one.
  pod["spec"]["initContainers"] = json::array({sidecar});
  refused = TranslatePodDown({}, SampleView(gpu::Tier::kIsolated), pod, {});
  ASSERT_TRUE(std::holds_alternative<Refusal>(refused));
  EXPECT_EQ(std::get<Refusal>(refused).message,
            "2 3g.40gb instances requested, the reservation has 2 free of 2, at most 1 on one node");
}

TEST(SyncTierPatch, APinnedPodToleratesItsReservedNodesPlatformTaintsOnly) {
  VirtualClusterView view = SampleView(gpu::Tier::kIsolated);
  view.nodes[0].taints = {{"dedicated", "gpu", "NoSchedule"},
                          {"node.kubernetes.io/unreachable", "", "NoExecute"},
                          {"septa.dev/exclusive-tenant", "other", "NoSchedule"}};
  view.nodes[1].taints = {{"zone-maintenance", "", "NoSchedule"}};
  const HostPod out = Translate(SamplePod("t", "1"), view);
  ASSERT_EQ(out.assignment.node, "h100-0");
  EXPECT_EQ(out.object["spec"]["tolerations"],
            json::parse(R"([{"key":"dedicated","operator":"Equal","value":"gpu","effect":"NoSchedule"}])"));
  // A CPU pod is pinned nowhere and tolerates nothing.
  EXPECT_FALSE(Translate(SamplePod("c"), view).object["spec"].contains("tolerations"));
}

TEST(SyncTierPatch, ExclusiveToleratesTheTenantTaintOnItsNodes) {
  json pod = SamplePod("t", "4");
  MakeRestricted(pod);
  SyncSettings settings;
  settings.scheduler = host::Scheduler::kDefault;
  const HostPod out = Translate(pod, SampleView(gpu::Tier::kExclusive), settings);
  const json& spec = out.object["spec"];
  EXPECT_EQ(spec["tolerations"], json::parse(R"([{"key":"septa.dev/exclusive-tenant","operator":"Equal",
                                                  "value":"acme","effect":"NoSchedule"}])"));
  EXPECT_EQ(out.assignment.node, "h100-1");
  EXPECT_EQ(out.assignment.whole_gpus, 4);
  EXPECT_EQ(spec["runtimeClassName"], "kata-nvidia-gpu");

  // A CPU pod goes to the tenant's nodes too, any of them.
  json cpu = SamplePod("c");
  MakeRestricted(cpu);
  const json cpu_spec = Translate(cpu, SampleView(gpu::Tier::kExclusive), settings).object["spec"];
  EXPECT_EQ(cpu_spec["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
                    [0]["matchExpressions"][0]["key"],
            host::ReservedNodeLabel("septa-acme-x-train"));
  EXPECT_EQ(cpu_spec["runtimeClassName"], "kata-nvidia-gpu");
}

TEST(SyncTierPatch, CpuPodsOfGpuRuntimeTiersKeepTheDefaultRuntime) {
  const HostPod out = Translate(SamplePod("c"), SampleView(gpu::Tier::kIsolated));
  EXPECT_FALSE(out.object["spec"].contains("runtimeClassName"));
  EXPECT_FALSE(out.object["metadata"]["annotations"].contains("septa.dev/assignment"));
  EXPECT_EQ(out.assignment, PodAssignment{});
}

TEST(SyncTierPatch, TenantAffinityTermsEachGetThePin) {
  json pod = SamplePod("t", "1");
  pod["spec"]["affinity"] = json::parse(R"({"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":
    {"nodeSelectorTerms":[{"matchExpressions":[{"key":"zone","operator":"In","values":["a"]}]},
                          {"matchExpressions":[{"key":"zone","operator":"In","values":["b"]}]}]}}})");
  const json terms = Translate(pod, SampleView(gpu::Tier::kDedicated))
                         .object["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
                                ["nodeSelectorTerms"];
  ASSERT_EQ(terms.size(), 2u);
  for (const json& term : terms) EXPECT_EQ(term["matchExpressions"][1]["key"], "kubernetes.io/hostname");
}

TEST(SyncTierPatch, BindNodeNameWhenNoSchedulerAdmits) {
  SyncSettings settings;
  settings.bind_node_name = true;
  const json spec = Translate(SamplePod("t", "1"), SampleView(gpu::Tier::kDedicated), settings).object["spec"];
  EXPECT_EQ(spec["nodeName"], "h100-1");  // best fit: the node with one free GPU
  EXPECT_FALSE(spec.contains("affinity"));
  EXPECT_FALSE(spec.contains("schedulerName"));
}

}  // namespace
}  // namespace septa::tenancy::sync
