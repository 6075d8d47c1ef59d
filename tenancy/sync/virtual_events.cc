#include "tenancy/sync/virtual_events.h"

#include <array>
#include <string>

#include "common/fnv.h"
#include "common/text.h"

namespace septa::tenancy::sync {

using nlohmann::json;

namespace {

// What is copied as it is; everything else of the host event stays there.
constexpr std::array<const char*, 10> kCopiedFields = {
    "type",      "reason", "count",  "firstTimestamp",     "lastTimestamp",
    "eventTime", "source", "action", "reportingComponent", "reportingInstance"};

constexpr std::size_t kMaxNameLength = 253;  // a DNS subdomain

std::string EventString(const json& object, const char* key) {
  auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : "";
}

// The host name's part after the host pod's name ("<pod>.<suffix>", as the
// event recorder names them); a hash of it for a name of another form.
std::string VirtualEventName(std::string_view host_name, std::string_view host_pod_name, std::string_view pod_name) {
  std::string suffix;
  if (host_name.size() > host_pod_name.size() + 1 && host_name.starts_with(host_pod_name) &&
      host_name[host_pod_name.size()] == '.') {
    suffix = host_name.substr(host_pod_name.size() + 1);
  } else {
    static constexpr char kHex[] = "0123456789abcdef";
    std::uint64_t hash = Fnv1a64(host_name);
    for (int i = 0; i < 16; ++i, hash >>= 4) suffix.push_back(kHex[hash & 0xf]);
  }
  std::string name(pod_name);
  if (name.size() + 1 + suffix.size() > kMaxNameLength) {
    suffix = suffix.substr(0, std::min<std::size_t>(suffix.size(), 32));
    name.resize(kMaxNameLength - 1 - suffix.size());
  }
  return name + "." + suffix;
}

}  // namespace

std::optional<json> VirtualEvent(const json& host_event, std::string_view host_namespace,
                                 std::string_view host_pod_name, const VirtualRef& pod) {
  if (!host_event.is_object()) return std::nullopt;
  const json involved = host_event.value("involvedObject", json::object());
  if (!involved.is_object() || EventString(involved, "kind") != "Pod" ||
      EventString(involved, "name") != host_pod_name || EventString(involved, "namespace") != host_namespace) {
    return std::nullopt;
  }
  const json metadata = host_event.value("metadata", json::object());
  if (!metadata.is_object()) return std::nullopt;
  const std::string host_uid = EventString(metadata, "uid");
  if (host_uid.empty()) return std::nullopt;

  json object_ref = {{"kind", "Pod"}, {"apiVersion", "v1"}, {"namespace", pod.ns}, {"name", pod.name}};
  if (!pod.uid.empty()) object_ref["uid"] = pod.uid;
  if (auto path = involved.find("fieldPath"); path != involved.end() && path->is_string()) {
    object_ref["fieldPath"] = *path;
  }
  std::string message = EventString(host_event, "message");
  ReplaceAll(message, std::string(host_namespace) + "/" + std::string(host_pod_name), pod.ns + "/" + pod.name);
  ReplaceAll(message, host_pod_name, pod.name);

  json event = {{"apiVersion", "v1"},
                {"kind", "Event"},
                {"metadata",
                 {{"name", VirtualEventName(EventString(metadata, "name"), host_pod_name, pod.name)},
                  {"namespace", pod.ns},
                  {"annotations", {{std::string(kHostEventUidAnnotation), host_uid}}}}},
                {"involvedObject", std::move(object_ref)},
                {"message", std::move(message)}};
  for (const char* field : kCopiedFields) {
    if (auto it = host_event.find(field); it != host_event.end() && !it->is_null()) event[field] = *it;
  }
  return event;
}

bool VirtualEventUpToDate(const json& existing, const json& desired) {
  auto annotation = [](const json& event) {
    const json annotations = event.value("metadata", json::object()).value("annotations", json::object());
    return annotations.is_object() ? annotations.value(std::string(kHostEventUidAnnotation), "") : std::string();
  };
  if (annotation(existing) != annotation(desired)) return false;
  for (const char* field : {"involvedObject", "message"}) {
    if (existing.value(field, json()) != desired.value(field, json())) return false;
  }
  for (const char* field : kCopiedFields) {
    if (existing.value(field, json()) != desired.value(field, json())) return false;
  }
  return true;
}

}  // namespace septa::tenancy::sync
