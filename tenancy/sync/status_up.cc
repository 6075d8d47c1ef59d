// After creation (../shared/docs/SYNCER-FACTS.md "After creation", "Status
// and deletion"): the host pod's status copied up, and the changes of the
// virtual pod that may still reach a running host pod copied down.
#include <algorithm>
#include <set>
#include <string>

#include "tenancy/sync/bookkeeping.h"
#include "tenancy/sync/host_keys.h"
#include "tenancy/sync/pod_policy.h"
#include "tenancy/sync/pod_references.h"
#include "tenancy/sync/pod_translation.h"

namespace septa::tenancy::sync {
namespace {

using nlohmann::json;

std::set<std::string> Names(const json& list) {
  std::set<std::string> names;
  if (!list.is_array()) return names;
  for (const json& item : list) names.insert(item.value("name", ""));
  return names;
}

json Section(const json& pod, const char* section) {
  return pod.value("metadata", json::object()).value(section, json::object());
}

std::string HostAnnotation(const json& host_pod, std::string_view key) {
  const json annotations = Section(host_pod, "annotations");
  auto it = annotations.find(key);
  return it != annotations.end() && it->is_string() ? it->get<std::string>() : "";
}

// The three-way merge of one map: the virtual pod's keys set, the keys
// copied before (`copied_annotation`) and gone from the virtual pod deleted,
// everything else the host has kept. Writes into `out` (a merge patch).
void MergeKeys(const json& virtual_map, const json& host_map, const json& host_pod, std::string_view copied_annotation,
               const std::set<std::string>& integrations, json& out, json& annotations_out) {
  std::set<std::string> copied = SplitCopiedKeys(HostAnnotation(host_pod, copied_annotation));
  std::set<std::string> now;
  for (const auto& [key, value] : virtual_map.items()) {
    if (!CopiedToHost(key, value, integrations)) continue;
    now.insert(key);
    if (!host_map.contains(key) || host_map[key] != value) out[key] = value;
  }
  for (const std::string& key : copied) {
    if (!now.contains(key) && host_map.contains(key)) out[key] = nullptr;
  }
  if (now != copied) annotations_out[std::string(copied_annotation)] = JoinCopiedKeys(now);
}

}  // namespace

json StatusUp(const json& virtual_pod, const json& host_pod) {
  json status = host_pod.value("status", json::object());
  const json spec = virtual_pod.value("spec", json::object());
  const std::pair<const char*, const char*> lists[] = {{"containerStatuses", "containers"},
                                                       {"initContainerStatuses", "initContainers"},
                                                       {"ephemeralContainerStatuses", "ephemeralContainers"}};
  for (const auto& [statuses, containers] : lists) {
    if (!status.contains(statuses)) continue;
    const std::set<std::string> names = Names(spec.value(containers, json::array()));
    json kept = json::array();
    for (const json& s : status[statuses]) {
      if (names.contains(s.value("name", ""))) kept.push_back(s);
    }
    status[statuses] = std::move(kept);
  }
  // The QoS class follows from the virtual spec, not the rewritten host one.
  const json virtual_status = virtual_pod.value("status", json::object());
  if (virtual_status.contains("qosClass")) {
    status["qosClass"] = virtual_status["qosClass"];
  } else {
    status.erase("qosClass");
  }
  return status;
}

std::optional<json> HostPodPatch(const json& virtual_pod, const json& host_pod,
                                 const std::set<std::string>& integrations) {
  const json vspec = virtual_pod.value("spec", json::object());
  const json hspec = host_pod.value("spec", json::object());
  json spec = json::object();

  for (const char* list : {"containers", "initContainers"}) {
    json containers = hspec.value(list, json::array());
    bool changed = false;
    for (const json& v : vspec.value(list, json::array())) {
      for (json& h : containers) {
        if (h.value("name", "") == v.value("name", "") && h.value("image", "") != v.value("image", "")) {
          h["image"] = v.value("image", "");
          changed = true;
        }
      }
    }
    // A merge patch replaces a list: the host's containers, new images in.
    if (changed) spec[list] = std::move(containers);
  }
  if (vspec.contains("activeDeadlineSeconds") &&
      vspec["activeDeadlineSeconds"] != hspec.value("activeDeadlineSeconds", json())) {
    spec["activeDeadlineSeconds"] = vspec["activeDeadlineSeconds"];
  }

  json tolerations = hspec.value("tolerations", json::array());
  bool more = false;
  for (const json& t : vspec.value("tolerations", json::array())) {
    const std::string key = t.value("key", "");
    if (!TenantMayTolerate(key)) continue;  // as at creation (TranslatePodDown)
    if (std::find(tolerations.begin(), tolerations.end(), t) == tolerations.end()) {
      tolerations.push_back(t);
      more = true;
    }
  }
  if (more) spec["tolerations"] = std::move(tolerations);

  json annotations = json::object();
  // Gates can only be removed once a pod exists: those copied from the
  // virtual pod and removed there go; the host's own (Kueue's admission gate) stay.
  const std::set<std::string> virtual_gates = Names(vspec.value("schedulingGates", json::array()));
  const std::set<std::string> copied_gates = SplitCopiedKeys(HostAnnotation(host_pod, kCopiedGatesAnnotation));
  json gates = json::array();
  std::set<std::string> still_copied;
  const json host_gates = hspec.value("schedulingGates", json::array());
  for (const json& gate : host_gates) {
    const std::string name = gate.value("name", "");
    if (copied_gates.contains(name) && !virtual_gates.contains(name)) continue;
    if (copied_gates.contains(name)) still_copied.insert(name);
    gates.push_back(gate);
  }
  if (gates.size() != host_gates.size()) {
    spec["schedulingGates"] = gates.empty() ? json(nullptr) : gates;
    annotations[std::string(kCopiedGatesAnnotation)] =
        still_copied.empty() ? json(nullptr) : json(JoinCopiedKeys(still_copied));
  }

  json labels = json::object();
  const json virtual_labels = Section(virtual_pod, "labels");
  MergeKeys(virtual_labels, Section(host_pod, "labels"), host_pod, kCopiedLabelsAnnotation, integrations, labels,
            annotations);
  MergeKeys(Section(virtual_pod, "annotations"), Section(host_pod, "annotations"), host_pod,
            kCopiedAnnotationsAnnotation, integrations, annotations, annotations);
  if (!labels.empty()) {
    json kept = json::object();
    for (const auto& [key, value] : virtual_labels.items()) {
      if (CopiedToHost(key, value, integrations)) kept[key] = value;
    }
    annotations[std::string(kVirtualLabelsAnnotation)] = DownwardLabels(kept);
  }

  json patch = json::object();
  if (!spec.empty()) patch["spec"] = std::move(spec);
  if (!labels.empty()) patch["metadata"]["labels"] = std::move(labels);
  if (!annotations.empty()) patch["metadata"]["annotations"] = std::move(annotations);
  if (patch.empty()) return std::nullopt;
  return patch;
}

}  // namespace septa::tenancy::sync
