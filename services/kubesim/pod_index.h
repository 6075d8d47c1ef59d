// The pods the simulated scheduler, kubelet and container exits act on,
// kept up to date from the storage's pod events. A tick reads these few
// instead of scanning every pod of the cluster under the storage lock: on a
// host of 10,000 pods three such scans every 100 ms were what a pod's
// create queued behind (docs/BENCHMARKS.md, "Syncer").
#pragma once

#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "services/kubesim/storage.h"

namespace septa::kubesim {

// What a pod requests, in thousandths, by resource name, as kube-scheduler
// counts it (quota.h PodTotal: limits stand in for missing requests,
// sidecars and init containers counted, overhead added).
std::map<std::string, long long> PodRequests(const nlohmann::json& pod);

class PodIndex final : public WatchSink {
 public:
  using Usage = std::map<std::string, std::map<std::string, long long>>;  // node -> resource -> thousandths

  // Pods without a node that are neither finished nor being deleted, by namespace and name.
  std::vector<ObjectPtr> Unscheduled() const;
  // Pods on a node that have not started (phase Pending).
  std::vector<ObjectPtr> Starting() const;
  // Running pods whose containers are told to exit (kRunForAnnotation, kExitCodeAnnotation).
  std::vector<ObjectPtr> Exiting() const;
  // What the unfinished pods on each node request, "pods" counting 1000 each.
  Usage Used() const;

  bool Deliver(const WatchEvent& event) override;
  bool Bookmark(std::uint64_t) override { return true; }

 private:
  struct Bound {
    std::string uid, node;
    std::map<std::string, long long> requests;
  };
  void Forget(const std::string& key);
  void AddUse(const Bound& bound, int sign);

  mutable std::mutex mu_;
  std::map<std::string, ObjectPtr> unscheduled_, starting_, exiting_;  // by "<ns>/<name>"
  std::map<std::string, Bound> bound_;
  Usage used_;
};

}  // namespace septa::kubesim
