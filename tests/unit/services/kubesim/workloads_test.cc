// The workload controllers through the API: Deployments (scale, rolling
// update bounds, Recreate, revisions), Jobs, StatefulSets, garbage
// collection, and the simulator's finishing containers. The simulator runs
// without a ticker thread: each test advances the fake clock and calls
// Tick() itself, so every step is deterministic.
#include <gtest/gtest.h>

#include <algorithm>

#include "services/kube/client.h"
#include "services/kube/resources.h"
#include "services/kubesim/kubesim.h"
#include "tests/support/fake_clock.h"
#include "tests/support/seeded_random.h"

namespace septa::kubesim {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;
using kube::kDeployments;
using kube::kPods;

constexpr const char* kWorkloadInventory = R"(
nodes:
  - name: cpu-0
    cpu: "64"
    memory: 256Gi
)";

json ContainersOf(const std::string& image = "nginx") { return json::array({{{"name", "c"}, {"image", image}}}); }

json DeploymentObject(const std::string& name, int replicas, json strategy = json()) {
  json d = {
      {"apiVersion", "apps/v1"},
      {"kind", "Deployment"},
      {"metadata", {{"name", name}}},
      {"spec",
       {{"replicas", replicas},
        {"selector", {{"matchLabels", {{"app", name}}}}},
        {"template", {{"metadata", {{"labels", {{"app", name}}}}}, {"spec", {{"containers", ContainersOf()}}}}}}}};
  if (!strategy.is_null()) d["spec"]["strategy"] = strategy;
  return d;
}

json JobObject(const std::string& name, json spec, json annotations) {
  json job = {{"apiVersion", "batch/v1"},
              {"kind", "Job"},
              {"metadata", {{"name", name}}},
              {"spec",
               {{"template",
                 {{"metadata", {{"annotations", annotations}}},
                  {"spec", {{"restartPolicy", "Never"}, {"containers", ContainersOf("busybox")}}}}}}}};
  job["spec"].update(spec);
  return job;
}

std::string Condition(const json& object, const std::string& type, const char* field = "status") {
  for (const auto& c : object.value("status", json::object()).value("conditions", json::array()))
    if (c.value("type", "") == type) return c.value(field, "");
  return "";
}

std::string ControllerOf(const json& object) {
  for (const auto& ref : object["metadata"].value("ownerReferences", json::array()))
    if (ref.value("controller", false)) return ref.value("uid", "");
  return "";
}

class kubesimWorkloads : public ::testing::Test {
 protected:
  void Start(bool with_nodes) {
    KubeSimOptions options;
    options.clock = &clock_;
    options.random = &random_;
    options.tick_interval = 0ms;  // this test ticks
    options.nodes.pod_start_delay = 1s;
    if (with_nodes) options.inventory = *ParseInventory(kWorkloadInventory, "test");
    sim_ = std::make_unique<KubeSim>(options);
    ASSERT_TRUE(sim_->Start().ok());
    auto config = kube::ParseKubeconfig(*sim_->AdminKubeconfig());
    client_ = std::move(*kube::Client::Create(*config));
  }
  void SetUp() override { Start(true); }

  // `n` passes, each after `step` of simulated time.
  void Run(int n, std::chrono::milliseconds step = 500ms) {
    for (int i = 0; i < n; ++i) {
      clock_.Advance(step);
      sim_->Tick();
    }
  }

  json Get(const kube::Resource& r, const std::string& name) {
    auto got = client_->Get(r, "default", name);
    EXPECT_TRUE(got.ok()) << name << ": " << got.status().message();
    return got.ok() ? *got : json::object();
  }
  std::vector<json> List(const kube::Resource& r, const std::string& selector = "") {
    kube::ListOptions options;
    options.label_selector = selector;
    auto page = client_->List(r, "default", options);
    EXPECT_TRUE(page.ok()) << page.status().message();
    std::vector<json> out;
    if (page.ok())
      for (const auto& o : page->items) out.push_back(o.ToJson());
    return out;
  }
  std::vector<json> PodsOf(const json& owner) {
    std::vector<json> out;
    for (auto& p : List(kPods))
      if (ControllerOf(p) == owner["metadata"]["uid"]) out.push_back(p);
    return out;
  }
  static bool Ready(const json& pod) {
    return pod["status"].value("phase", "") == "Running" && Condition(pod, "Ready") == "True";
  }
  void Create(const kube::Resource& r, const json& object) {
    auto created = client_->Create(r, "default", object);
    ASSERT_TRUE(created.ok()) << created.status().message();
  }
  void MergePatch(const kube::Resource& r, const std::string& name, const json& patch,
                  const std::string& subresource = "") {
    kube::PatchOptions options;
    options.subresource = subresource;
    auto patched = client_->Patch(r, "default", name, kube::PatchType::kMerge, patch.dump(), options);
    ASSERT_TRUE(patched.ok()) << patched.status().message();
  }
  // What `kubectl rollout status` decides from the Deployment (kubectl's
  // polymorphichelpers/rollout_status.go).
  bool RolledOut(const std::string& name) {
    json d = Get(kDeployments, name);
    const json& s = d["status"];
    if (d["metadata"]["generation"].get<int>() > s.value("observedGeneration", 0)) return false;
    const int replicas = d["spec"]["replicas"];
    return s.value("updatedReplicas", 0) >= replicas && s.value("replicas", 0) <= s.value("updatedReplicas", 0) &&
           s.value("availableReplicas", 0) >= s.value("updatedReplicas", 0);
  }

  FakeClock clock_;
  SeededRandom random_{7};
  std::unique_ptr<KubeSim> sim_;
  std::unique_ptr<kube::Client> client_;
};

TEST_F(kubesimWorkloads, DeploymentRunsItsPodsThroughAReplicaSet) {
  Create(kDeployments, DeploymentObject("web", 3));
  Run(1);
  auto sets = List(kube::kReplicaSets);
  ASSERT_EQ(sets.size(), 1u);
  const json rs = sets[0];
  const std::string hash = rs["metadata"]["labels"]["pod-template-hash"];
  EXPECT_FALSE(hash.empty());
  EXPECT_EQ(rs["metadata"]["name"], "web-" + hash);
  EXPECT_EQ(rs["spec"]["selector"]["matchLabels"]["pod-template-hash"], hash);
  EXPECT_EQ(rs["metadata"]["annotations"]["deployment.kubernetes.io/revision"], "1");
  EXPECT_EQ(ControllerOf(rs), Get(kDeployments, "web")["metadata"]["uid"]);
  EXPECT_FALSE(RolledOut("web"));

  Run(1);
  auto pods = PodsOf(rs);
  ASSERT_EQ(pods.size(), 3u);
  for (const auto& p : pods) {
    const std::string name = p["metadata"]["name"];
    EXPECT_EQ(name.size(), ("web-" + hash + "-").size() + 5) << name;
    EXPECT_EQ(name.rfind("web-" + hash + "-", 0), 0u) << name;
    EXPECT_EQ(p["metadata"]["labels"]["pod-template-hash"], hash);
    EXPECT_TRUE(p["metadata"]["ownerReferences"][0]["controller"].get<bool>());
    EXPECT_EQ(p["metadata"]["ownerReferences"][0]["kind"], "ReplicaSet");
  }
  Run(6);
  json d = Get(kDeployments, "web");
  EXPECT_TRUE(RolledOut("web")) << d["status"].dump();
  EXPECT_EQ(d["status"]["replicas"], 3);
  EXPECT_EQ(d["status"]["readyReplicas"], 3);
  EXPECT_EQ(d["status"]["availableReplicas"], 3);
  EXPECT_EQ(d["status"]["observedGeneration"], d["metadata"]["generation"]);
  EXPECT_EQ(Condition(d, "Available"), "True");
  EXPECT_EQ(Condition(d, "Progressing", "reason"), "NewReplicaSetAvailable");
  EXPECT_EQ(d["metadata"]["annotations"]["deployment.kubernetes.io/revision"], "1");
  // Defaults the API server fills in.
  EXPECT_EQ(d["spec"]["strategy"]["rollingUpdate"]["maxSurge"], "25%");
  EXPECT_EQ(d["spec"]["revisionHistoryLimit"], 10);

  // A settled deployment causes no writes.
  const std::string rv = d["metadata"]["resourceVersion"];
  Run(3);
  EXPECT_EQ(Get(kDeployments, "web")["metadata"]["resourceVersion"], rv);
}

TEST_F(kubesimWorkloads, ScaleSubresourceScalesUpAndDown) {
  Create(kDeployments, DeploymentObject("web", 2));
  Run(8);
  ASSERT_TRUE(RolledOut("web"));
  json scale = *client_->Get(kDeployments, "default", "web", "scale");
  EXPECT_EQ(scale["kind"], "Scale");
  EXPECT_EQ(scale["apiVersion"], "autoscaling/v1");
  EXPECT_EQ(scale["spec"]["replicas"], 2);
  EXPECT_EQ(scale["status"]["selector"], "app=web");

  MergePatch(kDeployments, "web", {{"spec", {{"replicas", 5}}}}, "scale");  // what kubectl scale sends
  EXPECT_FALSE(RolledOut("web")) << "the new generation is not observed yet";
  Run(8);
  EXPECT_TRUE(RolledOut("web"));
  EXPECT_EQ(List(kPods, "app=web").size(), 5u);

  MergePatch(kDeployments, "web", {{"spec", {{"replicas", 1}}}}, "scale");
  Run(2);
  EXPECT_TRUE(RolledOut("web"));
  EXPECT_EQ(List(kPods, "app=web").size(), 1u);
  EXPECT_EQ(List(kube::kReplicaSets).size(), 1u) << "scaling is not a new revision";

  kube::PatchOptions options;
  options.subresource = "scale";
  auto negative =
      client_->Patch(kDeployments, "default", "web", kube::PatchType::kMerge, R"({"spec":{"replicas":-1}})", options);
  ASSERT_FALSE(negative.ok());
  EXPECT_NE(negative.status().message().find("spec.replicas"), std::string::npos) << negative.status().message();
}

TEST_F(kubesimWorkloads, RollingUpdateStaysWithinMaxSurgeAndMaxUnavailable) {
  Create(kDeployments,
         DeploymentObject("web", 4,
                          {{"type", "RollingUpdate"}, {"rollingUpdate", {{"maxSurge", 1}, {"maxUnavailable", 0}}}}));
  Run(8);
  ASSERT_TRUE(RolledOut("web"));
  MergePatch(kDeployments, "web", {{"spec", {{"template", {{"spec", {{"containers", ContainersOf("nginx:1.27")}}}}}}}});
  bool done = false;
  for (int i = 0; i < 60 && !done; ++i) {
    Run(1);
    int active = 0, available = 0;
    for (const auto& p : List(kPods, "app=web")) {
      active += !p["metadata"].contains("deletionTimestamp");
      available += Ready(p);
    }
    EXPECT_LE(active, 5) << "maxSurge 1 over 4 replicas, pass " << i;
    EXPECT_GE(available, 4) << "maxUnavailable 0, pass " << i;
    done = RolledOut("web");
  }
  ASSERT_TRUE(done);
  auto sets = List(kube::kReplicaSets);
  ASSERT_EQ(sets.size(), 2u) << "the old ReplicaSet is kept for rollback";
  for (const auto& rs : sets) {
    const bool is_new = rs["spec"]["template"]["spec"]["containers"][0]["image"] == "nginx:1.27";
    EXPECT_EQ(rs["spec"]["replicas"], is_new ? 4 : 0);
    EXPECT_EQ(rs["metadata"]["annotations"]["deployment.kubernetes.io/revision"], is_new ? "2" : "1");
  }
  EXPECT_EQ(Get(kDeployments, "web")["metadata"]["annotations"]["deployment.kubernetes.io/revision"], "2");
  for (const auto& p : List(kPods, "app=web")) EXPECT_EQ(p["spec"]["containers"][0]["image"], "nginx:1.27");
}

TEST_F(kubesimWorkloads, RecreateStopsEveryOldPodBeforeANewOneStarts) {
  Create(kDeployments, DeploymentObject("web", 3, {{"type", "Recreate"}}));
  Run(8);
  ASSERT_TRUE(RolledOut("web"));
  MergePatch(kDeployments, "web", {{"spec", {{"template", {{"spec", {{"containers", ContainersOf("nginx:2")}}}}}}}});
  bool done = false;
  for (int i = 0; i < 30 && !done; ++i) {
    Run(1);
    int old_pods = 0, new_pods = 0;
    for (const auto& p : List(kPods, "app=web"))
      (p["spec"]["containers"][0]["image"] == "nginx:2" ? new_pods : old_pods)++;
    EXPECT_TRUE(old_pods == 0 || new_pods == 0) << old_pods << " old and " << new_pods << " new, pass " << i;
    done = RolledOut("web");
  }
  EXPECT_TRUE(done);
  EXPECT_EQ(List(kPods, "app=web").size(), 3u);
}

TEST_F(kubesimWorkloads, ControllersTakePodPhasesAsTheyComeWithoutNodes) {
  Start(false);  // a virtual cluster: no nodes; a syncer reports the phases
  Create(kDeployments, DeploymentObject("web", 2));
  Run(10);
  auto pods = List(kPods, "app=web");
  ASSERT_EQ(pods.size(), 2u);
  EXPECT_EQ(pods[0]["status"]["phase"], "Pending");
  EXPECT_FALSE(RolledOut("web"));
  for (auto& p : pods) {
    p["status"]["phase"] = "Running";
    p["status"]["conditions"] = {{{"type", "Ready"}, {"status", "True"}}};
    kube::WriteOptions options;
    options.subresource = "status";
    ASSERT_TRUE(client_->Update(kPods, "default", p, options).ok());
  }
  Run(2);
  EXPECT_TRUE(RolledOut("web"));
}

TEST_F(kubesimWorkloads, ARolloutWithoutProgressExceedsItsDeadline) {
  Start(false);  // no nodes: the pods never run
  json d = DeploymentObject("web", 1);
  d["spec"]["progressDeadlineSeconds"] = 30;
  Create(kDeployments, d);
  Run(4);
  EXPECT_EQ(Condition(Get(kDeployments, "web"), "Progressing"), "True");
  Run(1, 20s);
  EXPECT_EQ(Condition(Get(kDeployments, "web"), "Progressing"), "True") << "22 s without progress";
  Run(1, 10s);
  json after = Get(kDeployments, "web");
  EXPECT_EQ(Condition(after, "Progressing"), "False") << after["status"].dump();
  EXPECT_EQ(Condition(after, "Progressing", "reason"), "ProgressDeadlineExceeded");
  EXPECT_EQ(Condition(after, "Available"), "False");
}

TEST_F(kubesimWorkloads, StatefulSetRollingUpdateReplacesFromTheTopDownToThePartition) {
  json set = {{"apiVersion", "apps/v1"},
              {"kind", "StatefulSet"},
              {"metadata", {{"name", "db"}}},
              {"spec",
               {{"replicas", 3},
                {"podManagementPolicy", "Parallel"},
                {"updateStrategy", {{"type", "RollingUpdate"}, {"rollingUpdate", {{"partition", 1}}}}},
                {"selector", {{"matchLabels", {{"app", "db"}}}}},
                {"template",
                 {{"metadata", {{"labels", {{"app", "db"}}}}}, {"spec", {{"containers", ContainersOf("pg:16")}}}}}}}};
  Create(kube::kStatefulSets, set);
  Run(1);
  EXPECT_EQ(List(kPods, "app=db").size(), 3u) << "Parallel creates every pod at once";
  Run(6);
  MergePatch(kube::kStatefulSets, "db",
             {{"spec", {{"template", {{"spec", {{"containers", ContainersOf("pg:17")}}}}}}}});
  std::vector<std::string> replaced;  // in the order the pods went
  for (int i = 0; i < 30; ++i) {
    Run(1);
    for (const char* name : {"db-0", "db-1", "db-2"}) {
      auto pod = client_->Get(kPods, "default", name);
      if ((!pod.ok() || (*pod)["spec"]["containers"][0]["image"] == "pg:17") &&
          std::find(replaced.begin(), replaced.end(), name) == replaced.end())
        replaced.push_back(name);
    }
  }
  EXPECT_EQ(replaced, (std::vector<std::string>{"db-2", "db-1"})) << "db-0 is below the partition";
  json after = Get(kube::kStatefulSets, "db");
  EXPECT_EQ(after["status"]["updatedReplicas"], 2);
  EXPECT_EQ(after["status"]["currentReplicas"], 1);
  EXPECT_NE(after["status"]["currentRevision"], after["status"]["updateRevision"]);
  EXPECT_EQ(Get(kPods, "db-0")["spec"]["containers"][0]["image"], "pg:16");
}

TEST_F(kubesimWorkloads, OnFailureRestartsCountTowardTheBackoffLimit) {
  json job = JobObject("flaky", {{"backoffLimit", 2}}, {{"kubesim.septa.dev/exit-code", "1"}});
  job["spec"]["template"]["spec"]["restartPolicy"] = "OnFailure";
  Create(kube::kJobs, job);
  json got = json::object();
  for (int i = 0; i < 30 && Condition(got, "Failed") != "True"; ++i) {
    Run(1);
    got = Get(kube::kJobs, "flaky");
  }
  EXPECT_EQ(Condition(got, "Failed", "reason"), "BackoffLimitExceeded") << got["status"].dump();
  EXPECT_EQ(List(kPods, "job-name=flaky").size(), 0u) << "the restarting pod is deleted";
}

TEST_F(kubesimWorkloads, AJobPastItsActiveDeadlineFails) {
  Create(kube::kJobs, JobObject("slow", {{"activeDeadlineSeconds", 5}}, {{"kubesim.septa.dev/run-for-ms", "3600000"}}));
  Run(8);  // 4 s
  EXPECT_EQ(Condition(Get(kube::kJobs, "slow"), "Failed"), "");
  EXPECT_EQ(List(kPods, "job-name=slow").size(), 1u);
  Run(4);  // 6 s
  json job = Get(kube::kJobs, "slow");
  EXPECT_EQ(Condition(job, "Failed", "reason"), "DeadlineExceeded") << job["status"].dump();
  Run(1);
  EXPECT_TRUE(List(kPods, "job-name=slow").empty()) << "its running pod is stopped";
}

TEST_F(kubesimWorkloads, JobRunsItsCompletionsWithBoundedParallelism) {
  Create(kube::kJobs,
         JobObject("work", {{"completions", 3}, {"parallelism", 2}}, {{"kubesim.septa.dev/run-for-ms", "1500"}}));
  json job = Get(kube::kJobs, "work");
  const std::string uid = job["metadata"]["uid"];
  EXPECT_EQ(job["spec"]["backoffLimit"], 6);
  EXPECT_EQ(job["spec"]["selector"]["matchLabels"]["batch.kubernetes.io/controller-uid"], uid);
  bool complete = false;
  for (int i = 0; i < 40 && !complete; ++i) {
    Run(1);
    auto pods = List(kPods, "job-name=work");
    int running = 0;
    for (const auto& p : pods) running += p["status"]["phase"] != "Succeeded";
    EXPECT_LE(running, 2) << "parallelism 2, pass " << i;
    job = Get(kube::kJobs, "work");
    complete = Condition(job, "Complete") == "True";
  }
  ASSERT_TRUE(complete) << job["status"].dump();
  EXPECT_EQ(job["status"]["succeeded"], 3);
  EXPECT_EQ(job["status"]["active"], 0);
  EXPECT_EQ(job["status"]["failed"], 0);
  EXPECT_TRUE(job["status"].contains("startTime"));
  EXPECT_TRUE(job["status"].contains("completionTime"));
  auto pods = List(kPods, "batch.kubernetes.io/job-name=work");
  ASSERT_EQ(pods.size(), 3u);
  for (const auto& p : pods) {
    EXPECT_EQ(p["metadata"]["labels"]["controller-uid"], uid);
    EXPECT_EQ(p["metadata"]["labels"]["batch.kubernetes.io/controller-uid"], uid);
    EXPECT_EQ(p["status"]["containerStatuses"][0]["state"]["terminated"]["reason"], "Completed");
  }
  Run(5);
  EXPECT_EQ(List(kPods, "job-name=work").size(), 3u) << "a complete job starts nothing more";
}

TEST_F(kubesimWorkloads, FailingJobRetriesUntilItsBackoffLimit) {
  Create(kube::kJobs, JobObject("fails", {{"backoffLimit", 2}},
                                {{"kubesim.septa.dev/exit-code", "3"}, {"kubesim.septa.dev/run-for-ms", "500"}}));
  json job = json::object();
  for (int i = 0; i < 40 && Condition(job, "Failed") != "True"; ++i) {
    Run(1);
    job = Get(kube::kJobs, "fails");
  }
  ASSERT_EQ(Condition(job, "Failed"), "True") << job["status"].dump();
  EXPECT_EQ(Condition(job, "Failed", "reason"), "BackoffLimitExceeded");
  EXPECT_EQ(job["status"]["failed"], 3) << "the first try and backoffLimit retries";
  EXPECT_EQ(job["status"]["active"], 0);
  auto pods = List(kPods, "job-name=fails");
  ASSERT_EQ(pods.size(), 3u);
  for (const auto& p : pods) {
    EXPECT_EQ(p["status"]["phase"], "Failed");
    EXPECT_EQ(p["status"]["containerStatuses"][0]["state"]["terminated"]["exitCode"], 3);
  }
  Run(5);
  EXPECT_EQ(List(kPods, "job-name=fails").size(), 3u);
}

TEST_F(kubesimWorkloads, StatefulSetStartsInOrderAndShrinksFromTheTop) {
  Create(kube::kStatefulSets,
         {{"apiVersion", "apps/v1"},
          {"kind", "StatefulSet"},
          {"metadata", {{"name", "db"}}},
          {"spec",
           {{"replicas", 3},
            {"serviceName", "db"},
            {"selector", {{"matchLabels", {{"app", "db"}}}}},
            {"template", {{"metadata", {{"labels", {{"app", "db"}}}}}, {"spec", {{"containers", ContainersOf()}}}}}}}});
  std::set<std::string> names;
  for (int i = 0; i < 30; ++i) {
    Run(1);
    std::map<int, json> by_ordinal;
    for (const auto& p : List(kPods, "app=db")) {
      const std::string name = p["metadata"]["name"];
      names.insert(name);
      by_ordinal[std::stoi(name.substr(3))] = p;
    }
    for (const auto& [ordinal, pod] : by_ordinal) {
      for (int before = 0; before < ordinal; ++before)
        EXPECT_TRUE(by_ordinal.count(before) && Ready(by_ordinal[before]))
            << "db-" << ordinal << " exists while db-" << before << " is not ready, pass " << i;
    }
  }
  EXPECT_EQ(names, (std::set<std::string>{"db-0", "db-1", "db-2"}));
  json set = Get(kube::kStatefulSets, "db");
  EXPECT_EQ(set["status"]["readyReplicas"], 3);
  EXPECT_EQ(set["status"]["replicas"], 3);
  EXPECT_EQ(set["status"]["currentRevision"], set["status"]["updateRevision"]);
  EXPECT_EQ(set["status"]["observedGeneration"], set["metadata"]["generation"]);
  json db0 = Get(kPods, "db-0");
  EXPECT_EQ(db0["spec"]["hostname"], "db-0");
  EXPECT_EQ(db0["spec"]["subdomain"], "db");
  EXPECT_EQ(db0["metadata"]["labels"]["apps.kubernetes.io/pod-index"], "0");

  MergePatch(kube::kStatefulSets, "db", {{"spec", {{"replicas", 1}}}}, "scale");
  Run(1);
  EXPECT_TRUE(client_->Get(kPods, "default", "db-1").ok()) << "db-2 goes first";
  EXPECT_FALSE(client_->Get(kPods, "default", "db-2").ok());
  Run(1);
  EXPECT_FALSE(client_->Get(kPods, "default", "db-1").ok());
  EXPECT_TRUE(client_->Get(kPods, "default", "db-0").ok());
  Run(1);
  EXPECT_EQ(Get(kube::kStatefulSets, "db")["status"]["replicas"], 1);
}

TEST_F(kubesimWorkloads, DeletingOwnersRemovesWhatTheyOwn) {
  Create(kDeployments, DeploymentObject("web", 2));
  Create(kube::kJobs, JobObject("sleepy", json::object(), {{"kubesim.septa.dev/run-for-ms", "3600000"}}));
  Run(8);
  ASSERT_EQ(List(kPods).size(), 3u);
  ASSERT_TRUE(client_->Delete(kDeployments, "default", "web").ok());  // background, as kubectl deletes
  EXPECT_TRUE(List(kube::kReplicaSets).empty());
  EXPECT_EQ(List(kPods).size(), 1u);
  ASSERT_TRUE(client_->Delete(kube::kJobs, "default", "sleepy").ok());
  EXPECT_TRUE(List(kPods).empty());

  // A pod whose owner is already gone is collected on the next pass.
  json orphan = {{"apiVersion", "v1"},
                 {"kind", "Pod"},
                 {"metadata",
                  {{"name", "orphan"},
                   {"ownerReferences",
                    {{{"apiVersion", "apps/v1"},
                      {"kind", "ReplicaSet"},
                      {"name", "gone"},
                      {"uid", "00000000-0000-4000-8000-000000000000"},
                      {"controller", true}}}}}},
                 {"spec", {{"containers", ContainersOf()}}}};
  Create(kPods, orphan);
  Run(1);
  EXPECT_FALSE(client_->Get(kPods, "default", "orphan").ok());
}

TEST_F(kubesimWorkloads, RestartingContainersCountRestartsAndKeepRunning) {
  Create(kPods, {{"apiVersion", "v1"},
                 {"kind", "Pod"},
                 {"metadata", {{"name", "loop"}, {"annotations", {{"kubesim.septa.dev/run-for-ms", "2000"}}}}},
                 {"spec", {{"containers", ContainersOf()}}}});  // restartPolicy Always by default
  Run(3);                                                       // bound, then Running after the 1 s start delay
  ASSERT_EQ(Get(kPods, "loop")["status"]["phase"], "Running");
  Run(4);
  json pod = Get(kPods, "loop");
  EXPECT_EQ(pod["status"]["phase"], "Running");
  EXPECT_EQ(pod["status"]["containerStatuses"][0]["restartCount"], 1);
  EXPECT_EQ(pod["status"]["containerStatuses"][0]["lastState"]["terminated"]["reason"], "Completed");
}

TEST_F(kubesimWorkloads, BadWorkloadsAreRefusedNamingTheField) {
  auto expect_invalid = [&](const kube::Resource& r, const json& object, const std::string& field) {
    auto created = client_->Create(r, "default", object);
    ASSERT_FALSE(created.ok()) << object.dump();
    EXPECT_EQ(kube::KubeReason(created.status()), "Invalid");
    EXPECT_NE(created.status().message().find(field), std::string::npos) << created.status().message();
  };
  json always = JobObject("always", json::object(), json::object());
  always["spec"]["template"]["spec"]["restartPolicy"] = "Always";
  expect_invalid(kube::kJobs, always, "spec.template.spec.restartPolicy");
  expect_invalid(kube::kJobs, JobObject("bad-run", json::object(), {{"kubesim.septa.dev/run-for-ms", "soon"}}),
                 "spec.template.metadata.annotations[kubesim.septa.dev/run-for-ms]");
  expect_invalid(kube::kJobs, JobObject("bad-code", json::object(), {{"kubesim.septa.dev/exit-code", "256"}}),
                 "spec.template.metadata.annotations[kubesim.septa.dev/exit-code]");
  json mismatch = DeploymentObject("web", 1);
  mismatch["spec"]["selector"]["matchLabels"]["app"] = "other";
  expect_invalid(kDeployments, mismatch, "spec.template.metadata.labels");
  json no_image = DeploymentObject("web", 1);
  no_image["spec"]["template"]["spec"]["containers"][0].erase("image");
  expect_invalid(kDeployments, no_image, "spec.template.spec.containers[0].image");
  expect_invalid(kDeployments, DeploymentObject("web", 1, {{"type", "Sideways"}}), "spec.strategy.type");
  EXPECT_TRUE(List(kDeployments).empty());
  EXPECT_TRUE(List(kube::kJobs).empty());
}

}  // namespace
}  // namespace septa::kubesim
