#include "services/kubesim/pod_index.h"

#include "services/kubesim/quota.h"
#include "services/kubesim/workload_defaults.h"
#include "services/kubesim/workload_util.h"

namespace septa::kubesim {

using nlohmann::json;

std::map<std::string, long long> PodRequests(const json& pod) {
  std::map<std::string, long long> out;
  auto total = PodTotal(pod, "requests");
  if (!total.ok()) return out;  // never stored: admission (quota.h AdmitPod) refuses it
  for (const auto& [resource, amount] : *total) out[resource] = amount.milli;
  return out;
}

namespace {

std::vector<ObjectPtr> Values(const std::map<std::string, ObjectPtr>& pods) {
  std::vector<ObjectPtr> out;
  out.reserve(pods.size());
  for (const auto& [key, pod] : pods) out.push_back(pod);
  return out;
}

void Keep(std::map<std::string, ObjectPtr>& pods, const std::string& key, bool member, const ObjectPtr& pod) {
  if (member) {
    pods[key] = pod;
  } else {
    pods.erase(key);
  }
}

}  // namespace

std::vector<ObjectPtr> PodIndex::Unscheduled() const {
  std::lock_guard lock(mu_);
  return Values(unscheduled_);
}

std::vector<ObjectPtr> PodIndex::Starting() const {
  std::lock_guard lock(mu_);
  return Values(starting_);
}

std::vector<ObjectPtr> PodIndex::Exiting() const {
  std::lock_guard lock(mu_);
  return Values(exiting_);
}

PodIndex::Usage PodIndex::Used() const {
  std::lock_guard lock(mu_);
  return used_;
}

bool PodIndex::Deliver(const WatchEvent& event) {
  const json& pod = *event.object;
  const json& metadata = workload::Metadata(pod);
  const std::string key = metadata.value("namespace", "") + "/" + metadata.value("name", "");
  std::lock_guard lock(mu_);
  if (event.type == WatchEvent::Type::kDeleted) {
    Forget(key);
    return true;
  }
  const std::string node = workload::Child(pod, "spec").value("nodeName", "");
  const std::string phase = workload::Phase(pod);
  const bool terminal = workload::Terminal(pod);
  const json& annotations = workload::Child(metadata, "annotations");
  Keep(unscheduled_, key, node.empty() && !terminal && !workload::Deleting(pod), event.object);
  Keep(starting_, key, !node.empty() && phase == "Pending", event.object);
  Keep(exiting_, key,
       phase == "Running" && (annotations.contains(kRunForAnnotation) || annotations.contains(kExitCodeAnnotation)),
       event.object);
  // A pod's requests are read once, when it is bound; they count until it
  // finishes or goes (a pod of the same name later is another pod).
  const bool uses_node = !node.empty() && !terminal;
  const std::string uid = workload::Uid(pod);
  auto bound = bound_.find(key);
  if (bound != bound_.end() && (!uses_node || bound->second.uid != uid || bound->second.node != node)) {
    AddUse(bound->second, -1);
    bound_.erase(bound);
    bound = bound_.end();
  }
  if (uses_node && bound == bound_.end()) {
    Bound fresh{uid, node, PodRequests(pod)};
    AddUse(fresh, +1);
    bound_.emplace(key, std::move(fresh));
  }
  return true;
}

void PodIndex::Forget(const std::string& key) {
  unscheduled_.erase(key);
  starting_.erase(key);
  exiting_.erase(key);
  auto bound = bound_.find(key);
  if (bound == bound_.end()) return;
  AddUse(bound->second, -1);
  bound_.erase(bound);
}

void PodIndex::AddUse(const Bound& bound, int sign) {
  auto& use = used_[bound.node];
  for (const auto& [resource, quantity] : bound.requests) use[resource] += sign * quantity;
  use["pods"] += sign * 1000;
  if (use["pods"] == 0) used_.erase(bound.node);  // nothing left on it
}

}  // namespace septa::kubesim
