// The workload controllers a stock kube-controller-manager runs, for
// kubesim: Deployment -> ReplicaSet -> Pods (scale, RollingUpdate and
// Recreate, revisions), StatefulSet (ordered, stable names), Job
// (completions, parallelism, backoff limit), and garbage collection of pods
// and ReplicaSets whose owners are gone.
//
// Level-based: each Tick() reads the objects and moves each one step toward
// its spec, writing only what changes. Pod phases are taken as they come
// (from NodeSim on a simulated host, from a syncer in a virtual cluster), so
// the controllers need no nodes. Time comes from the cluster's Clock.
#pragma once

#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "services/kubesim/api_server.h"

namespace septa::kubesim {

class OwnedPods;

class WorkloadControllers {
 public:
  WorkloadControllers(Cluster& cluster, ApiServer& api);

  // One pass of every controller: ReplicaSets, Deployments, StatefulSets,
  // Jobs, then garbage collection. Skipped when nothing was written since
  // the last pass began, except once a second for what time alone changes
  // (progress deadlines, minReadySeconds, activeDeadlineSeconds).
  void Tick();

 private:
  // Objects of a kind by the uid of their controlling owner.
  using ByOwner = std::map<std::string, std::vector<ObjectPtr>>;

  void SyncReplicaSet(const nlohmann::json& rs, const std::vector<ObjectPtr>& pods);
  void SyncDeployment(const nlohmann::json& deployment, const std::vector<ObjectPtr>& replica_sets,
                      const ByOwner& pods);
  void SyncStatefulSet(const nlohmann::json& set, const std::vector<ObjectPtr>& pods);
  void SyncJob(const nlohmann::json& job, const std::vector<ObjectPtr>& pods);
  void CollectOrphans(const std::vector<ObjectPtr>& objects, const char* group, const char* resource);

  // Writes: pods from a template, deletes, and in-place changes of an
  // object (a no-op when `change` leaves it as it is).
  bool CreatePod(const nlohmann::json& owner, const nlohmann::json& pod_template, const std::string& name);
  void Delete(const char* group, const char* resource, const nlohmann::json& object);
  void Change(const std::string& type_key, const nlohmann::json& object,
              const std::function<void(nlohmann::json&)>& change);
  // Change() of the status alone, when it differs from the object's.
  void SetStatus(const std::string& type_key, const nlohmann::json& object, nlohmann::json status);

  Cluster& cluster_;
  ApiServer& api_;
  // The pods with an owner, kept by the storage's pod events (a watch from
  // construction): no controller looks at any other, and a simulated host
  // has thousands of bare pods (the syncer's), which a list every pass copied.
  std::shared_ptr<OwnedPods> owned_pods_;
  std::uint64_t last_version_ = 0;  // the resource version when the last pass began
  TimePoint last_pass_{};
};

}  // namespace septa::kubesim
