// The syncer's reconcile table (docs/ARCHITECTURE.md "The syncer") end to
// end in one process: real kube clients, the host kubesim, the simulated
// virtual control plane.
#include "services/syncer/syncer_controller.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "services/kube/config.h"
#include "tenancy/sync/bookkeeping.h"
#include "tenancy/sync/pod_translation.h"
#include "tenancy/sync/virtual_nodes.h"
#include "tests/unit/services/syncer/syncer_fixture.h"

namespace septa::syncer::testing {
namespace {

using ::testing::SizeIs;

std::string Annotation(const json& object, std::string_view key) {
  return object["metadata"].value("annotations", json::object()).value(std::string(key), "");
}

class SyncerControllerTest : public SyncerFixture {};

// Control planes that give each virtual cluster an API server and DNS of
// its own, as the host control planes do (their Services' cluster IPs),
// over the fixture's simulated ones.
class OwnEndpointsPlanes final : public core::ControlPlanes {
 public:
  explicit OwnEndpointsPlanes(core::ControlPlanes& inner) : inner_(inner) {}
  Result<core::ControlPlaneState> Ensure(const std::string& t, const std::string& v) override {
    return inner_.Ensure(t, v);
  }
  Status Remove(const std::string& t, const std::string& v) override { return inner_.Remove(t, v); }
  Result<std::vector<std::pair<std::string, std::string>>> List() override { return inner_.List(); }
  Result<std::string> SyncerKubeconfig(const std::string& t, const std::string& v) override {
    return inner_.SyncerKubeconfig(t, v);
  }
  Result<std::optional<core::WorkloadEndpoints>> WorkloadEndpointsOf(const std::string& t,
                                                                     const std::string& v) override {
    if (t != "acme" || v != "train") return NotFound("no such virtual cluster");
    return std::optional<core::WorkloadEndpoints>(
        core::WorkloadEndpoints{.api_host = "10.96.0.10", .api_port = 443, .dns_nameserver = "10.96.0.53"});
  }

 private:
  core::ControlPlanes& inner_;
};

class SyncerOwnEndpointsTest : public SyncerFixture {
 protected:
  void SetUp() override {
    SyncerFixture::SetUp();
    if (HasFatalFailure()) return;
    syncer_.reset();
    own_ = std::make_unique<OwnEndpointsPlanes>(*planes_);
    StartSyncer(nullptr, own_.get());
  }
  std::unique_ptr<OwnEndpointsPlanes> own_;  // TearDown stops the syncer before it goes
};

// A pod of a virtual cluster with its own API server and DNS is pointed at
// them: the service environment, the API server's names, the nameserver.
TEST_F(SyncerOwnEndpointsTest, PodsAreSentToTheirClustersOwnApiServerAndDns) {
  RunningPod("web");
  auto host = HostPod("web");
  ASSERT_TRUE(host.has_value());
  const json& spec = (*host)["spec"];
  std::map<std::string, std::string> env;
  for (const json& var : spec["containers"][0]["env"]) env[var.value("name", "")] = var.value("value", "");
  EXPECT_EQ(env["KUBERNETES_SERVICE_HOST"], "10.96.0.10");
  EXPECT_EQ(env["KUBERNETES_SERVICE_PORT"], "443");
  EXPECT_EQ(env["KUBERNETES_PORT"], "tcp://10.96.0.10:443");
  ASSERT_EQ(spec["hostAliases"].size(), 1u) << spec.dump();
  EXPECT_EQ(spec["hostAliases"][0].value("ip", ""), "10.96.0.10");
  EXPECT_EQ(spec.value("dnsPolicy", ""), "None");
  EXPECT_EQ(spec["dnsConfig"]["nameservers"], json::array({"10.96.0.53"}));
  EXPECT_EQ(spec["dnsConfig"]["searches"][0], "default.svc.cluster.local");
}

TEST_F(SyncerControllerTest, ACpuPodSyncsDownRunsAndItsStatusAndNodeFlowUp) {
  const json running = RunningPod("web");
  auto host = HostPod("web");
  ASSERT_TRUE(host.has_value());
  const json& labels = (*host)["metadata"]["labels"];
  EXPECT_EQ(labels.value(std::string(tenancy::sync::kSyncedLabel), ""), "true");
  EXPECT_EQ(labels.value(std::string(tenancy::sync::kTenantLabel), ""), kTenant);
  EXPECT_EQ(labels.value(std::string(tenancy::sync::kVclusterLabel), ""), kVcluster);
  EXPECT_EQ(labels.value(std::string(tenancy::sync::kVirtualNamespaceLabel), ""), "default");
  EXPECT_EQ(Annotation(*host, tenancy::sync::kVirtualUidAnnotation), running["metadata"].value("uid", ""));
  EXPECT_EQ((*host)["spec"].value("schedulerName", ""), "kai-scheduler") << "KAI schedules synced pods";
  EXPECT_EQ(running["spec"].value("nodeName", ""), (*host)["spec"].value("nodeName", ""));
  EXPECT_EQ(running["status"].value("phase", ""), "Running");
  EXPECT_EQ(running["status"].value("podIP", ""), (*host)["status"].value("podIP", ""));
}

TEST_F(SyncerControllerTest, AVirtualDeleteDeletesTheHostPod) {
  RunningPod("web");
  ASSERT_TRUE(virtual_->Delete(kube::kPods, "default", "web").ok());
  EXPECT_TRUE(Eventually([&] { return !HostPod("web"); }));
}

TEST_F(SyncerControllerTest, AHostPodGoneDeletesItsStartedVirtualPodWithoutRecreatingIt) {
  RunningPod("web");
  ASSERT_TRUE(host_->Delete(kube::kPods, HostNamespace(), HostName("web")).ok());
  EXPECT_TRUE(Eventually([&] { return !VirtualPod("web"); }));
  ASSERT_TRUE(syncer_->AwaitIdle(10s));
  EXPECT_FALSE(HostPod("web").has_value()) << "a bare pod dies; it is not created again";
}

TEST_F(SyncerControllerTest, AStaleHostPodOfAnEarlierVirtualPodIsReplaced) {
  // A host pod written for an earlier virtual pod "web" (another UID), left
  // behind while the syncer was not looking.
  json earlier = Pod("web");
  earlier["metadata"]["uid"] = "00000000-0000-4000-8000-000000000000";
  auto stale = tenancy::sync::TranslatePodDown({}, View(), earlier, {});
  ASSERT_TRUE(std::holds_alternative<tenancy::sync::HostPod>(stale));
  ASSERT_TRUE(host_->Create(kube::kPods, HostNamespace(), std::get<tenancy::sync::HostPod>(stale).object).ok());

  const json running = RunningPod("web");
  auto host = HostPod("web");
  ASSERT_TRUE(host.has_value());
  EXPECT_EQ(Annotation(*host, tenancy::sync::kVirtualUidAnnotation), running["metadata"].value("uid", ""));
}

TEST_F(SyncerControllerTest, ADeploymentConvergesToItsReplicasOnTheHostAndScalesDown) {
  const json deployment = {{"apiVersion", "apps/v1"},
                           {"kind", "Deployment"},
                           {"metadata", {{"name", "api"}, {"namespace", "default"}}},
                           {"spec",
                            {{"replicas", 3},
                             {"selector", {{"matchLabels", {{"app", "api"}}}}},
                             {"template",
                              {{"metadata", {{"labels", {{"app", "api"}}}}},
                               {"spec", {{"containers", json::array({{{"name", "main"}, {"image", "busybox"}}})}}}}}}}};
  ASSERT_TRUE(virtual_->Create(kube::kDeployments, "default", deployment).ok());
  auto running_on_host = [&](std::size_t n) {
    std::size_t running = 0;
    for (const json& pod : HostPods()) running += pod["status"].value("phase", "") == "Running";
    return HostPods().size() == n && running == n;
  };
  EXPECT_TRUE(Eventually([&] { return running_on_host(3); }));
  ASSERT_TRUE(
      virtual_->Patch(kube::kDeployments, "default", "api", kube::PatchType::kMerge, R"({"spec":{"replicas":1}})")
          .ok());
  EXPECT_TRUE(Eventually([&] { return running_on_host(1); }));
}

TEST_F(SyncerControllerTest, ARefusedPodGetsOneEventAndTheConditionAndStaysPending) {
  ASSERT_TRUE(virtual_->Create(kube::kPods, "default", Pod("gpu", {{"limits", {{"nvidia.com/gpu", "1"}}}})).ok());
  auto refused = [&] {
    auto pod = VirtualPod("gpu");
    if (!pod) return false;
    for (const json& c : (*pod)["status"].value("conditions", json::array())) {
      if (c.value("type", "") == "PodScheduled" && c.value("status", "") == "False" &&
          c.value("reason", "") == "SyncRefused") {
        // When it was refused: what the portal shows as "since".
        return ParseRfc3339(c.value("lastTransitionTime", "")).has_value();
      }
    }
    return false;
  };
  ASSERT_TRUE(Eventually(refused));
  const std::string version = (*VirtualPod("gpu"))["metadata"].value("resourceVersion", "");
  syncer_->VirtualClusterChanged(std::string(kTenant) + "/" + kVcluster);  // another pass
  ASSERT_TRUE(syncer_->AwaitIdle(10s));
  EXPECT_EQ((*VirtualPod("gpu"))["metadata"].value("resourceVersion", ""), version) << "nothing written again";
  auto events = virtual_->List(kube::kEvents, "default");
  ASSERT_TRUE(events.ok());
  std::vector<json> sync_refused;
  for (const auto& item : events->items) {
    json event = item.ToJson();
    if (event.value("reason", "") == "SyncRefused") sync_refused.push_back(event);
  }
  ASSERT_THAT(sync_refused, SizeIs(1));
  EXPECT_EQ(sync_refused[0].value("type", ""), "Warning");
  EXPECT_EQ(sync_refused[0]["involvedObject"].value("name", ""), "gpu");
  EXPECT_FALSE(sync_refused[0].value("message", "").empty());
  EXPECT_FALSE(HostPod("gpu").has_value());
  EXPECT_EQ((*VirtualPod("gpu"))["status"].value("phase", ""), "Pending");
}

// A node name the tenant wrote into a new pod is refused, with the event
// and condition; it is not taken for a pod that had started and lost its
// host pod, which the syncer deletes.
TEST_F(SyncerControllerTest, APodNamingItsNodeIsRefusedNotDeleted) {
  json pod = Pod("pinned");
  pod["spec"]["nodeName"] = "cpu-0";
  ASSERT_TRUE(virtual_->Create(kube::kPods, "default", pod).ok());
  ASSERT_TRUE(Eventually([&] { return HasRefusalEvent(*virtual_, "Pod", "pinned", "spec.nodeName"); }));
  ASSERT_TRUE(syncer_->AwaitIdle(10s));
  auto still = VirtualPod("pinned");
  ASSERT_TRUE(still.has_value()) << "the tenant's pod was deleted";
  EXPECT_EQ((*still)["status"].value("phase", ""), "Pending");
  EXPECT_FALSE(HostPod("pinned").has_value());
  EXPECT_FALSE(VirtualNode("cpu-0").has_value()) << "a node the pod only names is not shown";
}

// Shared tier, KAI: `nvidia.com/gpu: 1` is the default fraction (250
// milli) of the reserved GPU, pinned to its node. A second one does not fit
// the 250 reserved: refused, until the first pod goes.
TEST_F(SyncerControllerTest, AGpuPodRunsInsideTheReservationAndOneBeyondItSyncsOnceCapacityFrees) {
  ASSERT_NO_FATAL_FAILURE(ReserveShare(250));
  const json gpu = {{"limits", {{"nvidia.com/gpu", "1"}}}};
  ASSERT_TRUE(virtual_->Create(kube::kPods, "default", Pod("first", gpu)).ok());
  ASSERT_TRUE(Eventually([&] {
    auto pod = VirtualPod("first");
    return pod && (*pod)["status"].value("phase", "") == "Running";
  }));
  auto host = HostPod("first");
  ASSERT_TRUE(host.has_value());
  EXPECT_EQ((*host)["spec"].value("nodeName", ""), "gpu-0");
  EXPECT_EQ(Annotation(*host, "gpu-fraction"), "0.25");
  EXPECT_EQ((*host)["spec"].value("schedulerName", ""), "kai-scheduler");

  ASSERT_TRUE(virtual_->Create(kube::kPods, "default", Pod("second", gpu)).ok());
  ASSERT_TRUE(Eventually([&] {
    auto pod = VirtualPod("second");
    if (!pod) return false;
    for (const json& c : (*pod)["status"].value("conditions", json::array())) {
      if (c.value("reason", "") == "SyncRefused") return true;
    }
    return false;
  }));
  EXPECT_FALSE(HostPod("second").has_value());

  ASSERT_TRUE(virtual_->Delete(kube::kPods, "default", "first").ok());
  EXPECT_TRUE(Eventually([&] {
    auto pod = VirtualPod("second");
    return pod && (*pod)["status"].value("phase", "") == "Running" && HostPod("second").has_value();
  })) << "the freed share goes to the refused pod";
}

// `kubectl get nodes` in the virtual cluster: the nodes its pods run on, the
// GPU node with the share reserved there as capacity, the CPU node (which
// the fixture's inventory does not hold) by name alone; each goes with the
// last pod bound to it.
TEST_F(SyncerControllerTest, TheNodesItsPodsRunOnAreShownWithTheTenantsGpusAndGoWithTheirLastPod) {
  ASSERT_NO_FATAL_FAILURE(ReserveShare(250));
  const json gpu = {{"limits", {{"nvidia.com/gpu", "1"}}}};
  ASSERT_TRUE(virtual_->Create(kube::kPods, "default", Pod("train", gpu)).ok());
  json web = Pod("web");
  web["spec"]["nodeSelector"] = {{"kubernetes.io/hostname", "cpu-0"}};
  ASSERT_TRUE(virtual_->Create(kube::kPods, "default", web).ok());
  ASSERT_TRUE(Eventually([&] { return VirtualNode("gpu-0") && VirtualNode("cpu-0"); }));

  const json gpu_node = *VirtualNode("gpu-0");
  EXPECT_EQ(gpu_node["status"]["capacity"], (json{{"cpu", "64"}, {"memory", "512Gi"}, {"nvidia.com/gpu", "1"}}));
  EXPECT_EQ(Annotation(gpu_node, tenancy::sync::kGpuMilliAnnotation), "250");
  EXPECT_EQ(gpu_node["status"]["conditions"][0].value("status", ""), "True");
  const json cpu_node = *VirtualNode("cpu-0");
  EXPECT_FALSE(cpu_node["status"].contains("capacity"));
  EXPECT_EQ(cpu_node["status"]["conditions"][0].value("reason", ""), "HostNodeUnknown");
  EXPECT_THAT(VirtualNodeNames(), ::testing::ElementsAre("cpu-0", "gpu-0"));

  ASSERT_TRUE(virtual_->Delete(kube::kPods, "default", "train").ok());
  EXPECT_TRUE(Eventually([&] { return !VirtualNode("gpu-0"); }));
  ASSERT_TRUE(syncer_->AwaitIdle(10s));
  EXPECT_THAT(VirtualNodeNames(), ::testing::ElementsAre("cpu-0"));
}

// A node the tenant (or anyone) created is not the syncer's: never changed or deleted.
TEST_F(SyncerControllerTest, ANodeTheSyncerDidNotWriteIsLeftAlone) {
  const json theirs = {{"apiVersion", "v1"}, {"kind", "Node"}, {"metadata", {{"name", "cpu-0"}}}};
  ASSERT_TRUE(virtual_->Create(kube::kNodes, "", theirs).ok());
  ASSERT_TRUE(
      virtual_->Create(kube::kNodes, "", {{"apiVersion", "v1"}, {"kind", "Node"}, {"metadata", {{"name", "spare"}}}})
          .ok());
  json web = Pod("web");
  web["spec"]["nodeSelector"] = {{"kubernetes.io/hostname", "cpu-0"}};
  ASSERT_TRUE(virtual_->Create(kube::kPods, "default", web).ok());
  ASSERT_TRUE(Eventually([&] {
    auto pod = VirtualPod("web");
    return pod && !(*pod)["spec"].value("nodeName", "").empty();
  }));
  ASSERT_TRUE(syncer_->AwaitIdle(10s));
  auto kept = VirtualNode("cpu-0");
  ASSERT_TRUE(kept.has_value());
  EXPECT_FALSE(
      (*kept)["metadata"].value("labels", json::object()).contains(std::string(tenancy::sync::kVirtualNodeLabel)));
  EXPECT_TRUE(VirtualNode("spare").has_value());
}

TEST_F(SyncerControllerTest, ARestartedSyncerCreatesNoDuplicateAndWritesNothingForConvergedPodsAndNodes) {
  const std::string node = RunningPod("web")["spec"].value("nodeName", "");
  ASSERT_TRUE(Eventually([&] { return VirtualNode(node).has_value(); }));
  ASSERT_TRUE(syncer_->AwaitIdle(10s));
  const std::string host_version = (*HostPod("web"))["metadata"].value("resourceVersion", "");
  const std::string virtual_version = (*VirtualPod("web"))["metadata"].value("resourceVersion", "");
  const std::string node_version = (*VirtualNode(node))["metadata"].value("resourceVersion", "");
  syncer_.reset();
  StartSyncer();
  ASSERT_TRUE(Eventually([&] { return !syncer_->watches().Watched().empty(); }));
  ASSERT_TRUE(syncer_->AwaitIdle(10s));
  EXPECT_THAT(HostPods(), SizeIs(1));
  EXPECT_EQ((*HostPod("web"))["metadata"].value("resourceVersion", ""), host_version);
  EXPECT_EQ((*VirtualPod("web"))["metadata"].value("resourceVersion", ""), virtual_version);
  EXPECT_EQ((*VirtualNode(node))["metadata"].value("resourceVersion", ""), node_version);
}

// A restarted syncer looks at each key once: its first sweep of a virtual
// cluster, when its watch starts, is all a restart costs. The watch's first
// list and the host informers' find the same objects and queue nothing
// more (at 1,000 x 10 they had a restart look at 55,000 keys, not 23,000).
TEST_F(SyncerControllerTest, ARestartLooksAtEachKeyOnceAsASweepDoes) {
  for (const char* name : {"a", "b", "c"}) RunningPod(name);
  ASSERT_TRUE(syncer_->AwaitIdle(10s));
  syncer_.reset();
  const double before = Reconciles();
  StartSyncer();
  ASSERT_TRUE(Eventually([&] { return !syncer_->watches().Watched().empty(); }));
  ASSERT_TRUE(syncer_->AwaitIdle(10s));
  const double restart = Reconciles() - before;
  syncer_->Resync();  // what the periodic sweep does
  ASSERT_TRUE(syncer_->AwaitIdle(10s));
  const double sweep = Reconciles() - before - restart;
  EXPECT_GE(sweep, 3 + 1 + 1);  // at least the pods, the nodes and the cluster
  EXPECT_EQ(restart, sweep);
}

// What the host's scheduler and kubelet say about a host pod shows on its
// virtual pod, with no host name in it; a repeat updates the copy, and a
// restarted syncer rewrites nothing.
TEST_F(SyncerControllerTest, AHostPodsEventsShowOnItsVirtualPodUnderItsVirtualNames) {
  const json running = RunningPod("web");
  const std::string host_pod = HostName("web");
  json event = {
      {"apiVersion", "v1"},
      {"kind", "Event"},
      {"metadata", {{"name", host_pod + ".17a2b3c4d5e6f708"}, {"namespace", HostNamespace()}}},
      {"involvedObject", {{"kind", "Pod"}, {"apiVersion", "v1"}, {"namespace", HostNamespace()}, {"name", host_pod}}},
      {"type", "Normal"},
      {"reason", "Pulled"},
      {"message", "Container image \"busybox\" already present on machine for " + host_pod},
      {"count", 1},
      {"source", {{"component", "kubelet"}}}};
  auto created = host_->Create(kube::kEvents, HostNamespace(), event);
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  auto virtual_event = [&]() -> std::optional<json> {
    auto got = virtual_->Get(kube::kEvents, "default", "web.17a2b3c4d5e6f708");
    return got.ok() ? std::optional<json>(*got) : std::nullopt;
  };
  ASSERT_TRUE(Eventually([&] { return virtual_event().has_value(); }));
  json copy = *virtual_event();
  EXPECT_EQ(copy["involvedObject"].value("name", ""), "web");
  EXPECT_EQ(copy["involvedObject"].value("namespace", ""), "default");
  EXPECT_EQ(copy["involvedObject"].value("uid", ""), running["metadata"].value("uid", ""));
  EXPECT_EQ(copy.value("reason", ""), "Pulled");
  EXPECT_EQ(copy.value("message", ""), "Container image \"busybox\" already present on machine for web");
  EXPECT_EQ(copy.dump().find(HostNamespace()), std::string::npos) << copy.dump();

  json repeated = *created;
  repeated["count"] = 2;
  ASSERT_TRUE(host_->Update(kube::kEvents, HostNamespace(), repeated).ok());
  ASSERT_TRUE(Eventually([&] { return virtual_event().value_or(json::object()).value("count", 0) == 2; }));

  ASSERT_TRUE(syncer_->AwaitIdle(10s));
  const std::string version = (*virtual_event())["metadata"].value("resourceVersion", "");
  syncer_.reset();
  StartSyncer();
  ASSERT_TRUE(Eventually([&] { return !syncer_->watches().Watched().empty(); }));
  ASSERT_TRUE(syncer_->AwaitIdle(10s));
  EXPECT_EQ((*virtual_event())["metadata"].value("resourceVersion", ""), version);
}

TEST_F(SyncerControllerTest, ASleepingVirtualClusterIsNotWatched) {
  ASSERT_TRUE(Eventually([&] { return !syncer_->watches().Watched().empty(); }));
  ASSERT_TRUE(store_
                  .Transact(core::TxMode::kReadWrite,
                            [&](core::Tx& tx) -> Status {
                              auto vc = tx.VirtualClusters().Get(kTenant, kVcluster);
                              SEPTA_RETURN_IF_ERROR(vc);
                              tenancy::VirtualCluster next = *vc;
                              next.state = tenancy::VirtualClusterState::kSleeping;
                              next.version = vc->version + 1;
                              return tx.VirtualClusters().Update(next, vc->version);
                            })
                  .ok());
  syncer_->VirtualClusterChanged(std::string(kTenant) + "/" + kVcluster);
  EXPECT_TRUE(Eventually([&] { return syncer_->watches().Watched().empty(); }));
  ASSERT_TRUE(virtual_->Create(kube::kPods, "default", Pod("web")).ok());
  ASSERT_TRUE(syncer_->AwaitIdle(10s));
  EXPECT_FALSE(HostPod("web").has_value());
}

// Issue 28 L1: a suspended tenant's virtual cluster is treated as asleep,
// whatever its own state: not watched, a new pod gets no host pod. Resumed
// (the NOTIFY of migrations/0015 tells the syncer, as here), the pod runs.
TEST_F(SyncerControllerTest, ASuspendedTenantsVirtualClusterIsNotSyncedUntilItIsActiveAgain) {
  ASSERT_TRUE(Eventually([&] { return !syncer_->watches().Watched().empty(); }));
  auto set_state = [&](core::TenantState state) {
    ASSERT_TRUE(store_
                    .Transact(core::TxMode::kReadWrite,
                              [&](core::Tx& tx) -> Status {
                                auto tenant = tx.Tenants().Get(kTenant);
                                SEPTA_RETURN_IF_ERROR(tenant);
                                core::Tenant next = *tenant;
                                next.state = state;
                                next.version = tenant->version + 1;
                                return tx.Tenants().Update(next, tenant->version);
                              })
                    .ok());
    syncer_->VirtualClusterChanged(std::string(kTenant) + "/" + kVcluster);
  };
  ASSERT_NO_FATAL_FAILURE(set_state(core::TenantState::kSuspended));
  EXPECT_TRUE(Eventually([&] { return syncer_->watches().Watched().empty(); }));
  ASSERT_TRUE(virtual_->Create(kube::kPods, "default", Pod("web")).ok());
  ASSERT_TRUE(syncer_->AwaitIdle(10s));
  EXPECT_FALSE(HostPod("web").has_value());

  ASSERT_NO_FATAL_FAILURE(set_state(core::TenantState::kActive));
  EXPECT_TRUE(Eventually([&] { return HostPod("web").has_value(); }));
}

}  // namespace
}  // namespace septa::syncer::testing
