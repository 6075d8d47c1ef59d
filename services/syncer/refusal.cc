#include "services/syncer/refusal.h"

#include <spdlog/spdlog.h>

#include "services/kube/resources.h"
#include "tenancy/host/names.h"
#include "tenancy/sync/bookkeeping.h"

namespace septa::syncer {

using nlohmann::json;

std::string RefusalText(const tenancy::sync::Refusal& refusal) {
  return refusal.field.empty() ? refusal.message : refusal.field + ": " + refusal.message;
}

json RefusalEvent(const json& virtual_object, const tenancy::sync::Refusal& refusal, std::string_view kind) {
  const json md = virtual_object.value("metadata", json::object());
  const std::string name = md.value("name", ""), uid = md.value("uid", "");
  const std::string text = RefusalText(refusal);
  // Event names may be 253 characters; an object's name is at most that too, so cut it.
  const std::string event_name =
      name.substr(0, 200) + ".sync-refused-" + tenancy::host::Sha256Hex(uid + "\n" + text).substr(0, 10);
  return {{"apiVersion", "v1"},
          {"kind", "Event"},
          {"metadata", {{"name", event_name}, {"namespace", md.value("namespace", "")}}},
          {"involvedObject",
           {{"apiVersion", "v1"},
            {"kind", std::string(kind)},
            {"name", name},
            {"namespace", md.value("namespace", "")},
            {"uid", uid},
            {"resourceVersion", md.value("resourceVersion", "")}}},
          {"reason", kSyncRefusedReason},
          {"type", "Warning"},
          {"message", text},
          {"count", 1},
          {"source", {{"component", "septa-syncer"}}},
          {"reportingComponent", "septa-syncer"}};
}

std::optional<json> RefusedStatus(const json& virtual_pod, const tenancy::sync::Refusal& refusal, TimePoint now) {
  json status = virtual_pod.value("status", json::object());
  if (!status.is_object()) status = json::object();
  json conditions = status.value("conditions", json::array());
  if (!conditions.is_array()) conditions = json::array();
  const json wanted = {{"type", "PodScheduled"},
                       {"status", "False"},
                       {"reason", kSyncRefusedReason},
                       {"message", RefusalText(refusal)},
                       {"lastTransitionTime", FormatRfc3339(now)}};
  json kept = json::array();
  for (const json& condition : conditions) {
    if (!condition.is_object() || condition.value("type", "") != "PodScheduled") {
      kept.push_back(condition);
      continue;
    }
    if (condition.value("status", "") == "False" && condition.value("reason", "") == kSyncRefusedReason &&
        condition.value("message", "") == wanted["message"]) {
      return std::nullopt;
    }
  }
  kept.push_back(wanted);
  status["conditions"] = std::move(kept);
  if (!status.contains("phase")) status["phase"] = "Pending";
  return status;
}

Status RefuseObject(WatchedCluster& cluster, const json& virtual_object, const std::string& kind,
                    const tenancy::sync::Refusal& refusal) {
  const std::string ns = tenancy::sync::MetadataField(virtual_object, "namespace");
  auto event = cluster.client().Create(kube::kEvents, ns, RefusalEvent(virtual_object, refusal, kind));
  if (!event.ok() && event.status().code() != Code::kAlreadyExists) return event.status();
  if (event.ok()) {
    spdlog::info("syncer: {} {}/{} of {}/{} refused: {}", kind, ns,
                 tenancy::sync::MetadataField(virtual_object, "name"), cluster.tenant(), cluster.vcluster(),
                 RefusalText(refusal));
  }
  return Status::Ok();
}

}  // namespace septa::syncer
