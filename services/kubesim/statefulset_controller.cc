// The StatefulSet controller (pkg/controller/statefulset in Kubernetes):
// pods <set>-0 .. <set>-(replicas-1) with stable names; OrderedReady
// creates each only once the ones before it are Running and Ready and
// removes the highest ordinal first; RollingUpdate replaces pods of an old
// template from the highest ordinal down to the partition, one at a time.
#include <algorithm>
#include <charconv>

#include "services/kubesim/objects.h"
#include "services/kubesim/workload_controllers.h"
#include "services/kubesim/workload_util.h"

namespace septa::kubesim {

using nlohmann::json;
using namespace workload;

namespace {

constexpr const char* kRevisionLabel = "controller-revision-hash";

// The ordinal of a pod of set `set_name`, -1 when its name has none.
long long Ordinal(const std::string& set_name, const std::string& pod_name) {
  if (pod_name.size() <= set_name.size() + 1 || pod_name.compare(0, set_name.size() + 1, set_name + "-") != 0)
    return -1;
  long long ordinal = -1;
  const char* begin = pod_name.data() + set_name.size() + 1;
  const char* end = pod_name.data() + pod_name.size();
  auto [at, ec] = std::from_chars(begin, end, ordinal);
  return ec == std::errc() && at == end ? ordinal : -1;
}

std::string RevisionOf(const json& pod) { return Child(Metadata(pod), "labels").value(kRevisionLabel, ""); }

}  // namespace

void WorkloadControllers::SyncStatefulSet(const json& set, const std::vector<ObjectPtr>& pods) {
  const json& spec = Child(set, "spec");
  const json& status = Child(set, "status");
  const std::string name = Name(set);
  const long long replicas = Int(spec, "replicas", 1);
  const bool ordered = spec.value("podManagementPolicy", "OrderedReady") == "OrderedReady";
  const json& strategy = Child(spec, "updateStrategy");
  const bool rolling = strategy.value("type", "RollingUpdate") == "RollingUpdate";
  const long long partition = Int(Child(strategy, "rollingUpdate"), "partition", 0);
  const json& pod_template = Child(spec, "template");
  const std::string update_revision = name + "-" + TemplateHash(pod_template);
  const std::string current_revision = status.value("currentRevision", update_revision);

  std::map<long long, ObjectPtr> by_ordinal;
  for (const auto& p : pods) {
    long long ordinal = Ordinal(name, Name(*p));
    if (ordinal >= 0) by_ordinal[ordinal] = p;
  }
  auto create = [&](long long ordinal) {
    const std::string pod_name = name + "-" + std::to_string(ordinal);
    json tmpl = pod_template;
    json& labels = tmpl["metadata"]["labels"];
    labels[kRevisionLabel] = update_revision;
    labels["statefulset.kubernetes.io/pod-name"] = pod_name;
    labels["apps.kubernetes.io/pod-index"] = std::to_string(ordinal);
    tmpl["spec"]["hostname"] = pod_name;
    if (spec.contains("serviceName")) tmpl["spec"]["subdomain"] = spec["serviceName"];
    CreatePod(set, tmpl, pod_name);
  };

  // Scale up (and replace failed or finished pods) in ordinal order.
  bool all_ready = true;
  for (long long ordinal = 0; ordinal < replicas; ++ordinal) {
    auto it = by_ordinal.find(ordinal);
    if (it == by_ordinal.end()) {
      create(ordinal);
      all_ready = false;
      if (ordered) break;
      continue;
    }
    const json& pod = *it->second;
    if (Terminal(pod) && !Deleting(pod)) Delete("", "pods", pod);  // recreated on a later pass
    if (!Ready(pod) || Deleting(pod)) {
      all_ready = false;
      if (ordered) break;
    }
  }
  // Scale down, highest ordinal first; OrderedReady waits for the rest to be ready.
  for (auto it = by_ordinal.rbegin(); it != by_ordinal.rend() && it->first >= replicas; ++it) {
    if (ordered && !all_ready) break;
    if (!Deleting(*it->second)) Delete("", "pods", *it->second);
    if (ordered) break;
  }
  // Rolling update: the highest pod of an old revision at or above the partition.
  const bool condemned = !by_ordinal.empty() && by_ordinal.rbegin()->first >= replicas;
  if (rolling && all_ready && !condemned) {
    for (long long ordinal = replicas - 1; ordinal >= partition; --ordinal) {
      auto it = by_ordinal.find(ordinal);
      if (it != by_ordinal.end() && RevisionOf(*it->second) != update_revision) {
        Delete("", "pods", *it->second);
        break;
      }
    }
  }

  long long count = 0, ready = 0, current = 0, updated = 0;
  for (const auto& [ordinal, pod] : by_ordinal) {
    if (Deleting(*pod)) continue;
    ++count;
    ready += Ready(*pod);
    current += RevisionOf(*pod) == current_revision;
    updated += RevisionOf(*pod) == update_revision;
  }
  std::string next_current = current_revision;
  if (updated == replicas && ready == replicas && count == replicas) {
    next_current = update_revision;  // the update is complete
    current = updated;
  }
  json s = status;
  s["observedGeneration"] = Metadata(set).value("generation", 1);
  s["replicas"] = count;
  s["readyReplicas"] = ready;
  s["availableReplicas"] = ready;
  s["currentReplicas"] = current;
  s["updatedReplicas"] = updated;
  s["currentRevision"] = next_current;
  s["updateRevision"] = update_revision;
  s["collisionCount"] = 0;
  SetStatus("statefulsets.apps", set, std::move(s));
}

}  // namespace septa::kubesim
