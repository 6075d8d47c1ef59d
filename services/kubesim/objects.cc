#include "services/kubesim/objects.h"

#include <map>
#include <set>

#include <array>
#include <cctype>
#include <cstdio>
#include <ctime>

#include "services/kubesim/quota.h"

namespace septa::kubesim {

using nlohmann::json;

ApiResult<std::string> NewUid(RandomSource& random) {
  std::array<std::uint8_t, 16> b{};
  if (Status st = random.Fill(b); !st.ok()) return InternalError("making a uid: " + st.message());
  b[6] = (b[6] & 0x0f) | 0x40;  // version 4
  b[8] = (b[8] & 0x3f) | 0x80;  // RFC 4122 variant
  char out[37];
  std::snprintf(out, sizeof out, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0], b[1],
                b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
  return std::string(out);
}

ApiResult<std::string> RandomSuffix(RandomSource& random) {
  static constexpr std::string_view kAlphabet = "bcdfghjklmnpqrstvwxz2456789";  // as the API server's
  std::array<std::uint8_t, 5> b{};
  if (Status st = random.Fill(b); !st.ok()) return InternalError("making a generated name: " + st.message());
  std::string out;
  for (auto byte : b) out.push_back(kAlphabet[byte % kAlphabet.size()]);
  return out;
}

namespace {

// RFC 1123 subdomain: lowercase alphanumerics, '-' and '.', at most 253.
bool IsDnsSubdomain(const std::string& s) {
  if (s.empty() || s.size() > 253) return false;
  if (!std::isalnum(static_cast<unsigned char>(s.front())) || !std::isalnum(static_cast<unsigned char>(s.back())))
    return false;
  for (char c : s) {
    if (!(std::islower(static_cast<unsigned char>(c)) || std::isdigit(static_cast<unsigned char>(c)) || c == '-' ||
          c == '.'))
      return false;
  }
  return true;
}

// RFC 1123 label: as a subdomain but without dots and at most 63.
bool IsDnsLabel(const std::string& s) {
  return s.size() <= 63 && s.find('.') == std::string::npos && IsDnsSubdomain(s);
}

bool NeedsLabelName(const ResourceType& type) {
  return type.group.empty() && (type.resource == "namespaces" || type.resource == "services");
}

// RBAC objects are named by path segment (system:auth-delegator), as
// kube-apiserver's ValidatePathSegmentName: not "." or "..", no '/' or '%'.
bool IsPathSegmentName(const std::string& s) {
  return !s.empty() && s != "." && s != ".." && s.find_first_of("/%") == std::string::npos;
}

void ValidateLabels(const json& labels, const std::string& field, std::vector<StatusCause>& causes) {
  if (labels.is_null()) return;
  if (!labels.is_object()) {
    causes.push_back({"FieldValueInvalid", "must be a map of strings", field});
    return;
  }
  for (const auto& [k, v] : labels.items()) {
    if (!v.is_string()) {
      causes.push_back({"FieldValueInvalid", "label values must be strings", field + "." + k});
    } else if (v.get<std::string>().size() > 63) {
      causes.push_back({"FieldValueInvalid", "must be no more than 63 characters", field + "." + k});
    }
  }
}

// Kubernetes' bound on what one config map or secret holds
// (MaxSecretSize): more would not fit a host's etcd once copied there.
constexpr std::size_t kMaxDataBytes = 1024 * 1024;

// The bytes a base64 value stands for.
std::size_t DecodedSize(const std::string& base64) {
  std::size_t padding = 0;
  for (auto it = base64.rbegin(); it != base64.rend() && *it == '=' && padding < 2; ++it) ++padding;
  return base64.size() / 4 * 3 - (base64.size() % 4 == 0 ? padding : 0) + base64.size() % 4 * 3 / 4;
}

// A config map's data and binaryData, a secret's data and stringData: maps
// of strings, together at most kMaxDataBytes, counted as kube-apiserver
// counts them (binary values decoded; a secret's stringData replaces the
// data of its keys). The refusal reads as kube-apiserver's: "[]: Too long:
// must have at most 1048576 bytes" for a config map, "data: ..." for a secret.
void ValidateData(const json& obj, bool secret, std::vector<StatusCause>& causes) {
  std::map<std::string, std::size_t> sizes;
  for (const char* field : secret ? std::array{"data", "stringData"} : std::array{"data", "binaryData"}) {
    const json values = obj.value(field, json());
    if (values.is_null()) continue;
    if (!values.is_object()) {
      causes.push_back({"FieldValueInvalid", "must be a map", field});
      continue;
    }
    const bool encoded = std::string_view(field) == (secret ? "data" : "binaryData");
    for (const auto& [key, value] : values.items()) {
      if (!value.is_string()) {
        causes.push_back({"FieldValueInvalid", "must be a string", std::string(field) + "." + key});
        continue;
      }
      const std::string& text = value.get_ref<const std::string&>();
      const std::size_t size = encoded ? DecodedSize(text) : text.size();
      // A config map's two maps hold distinct keys; a secret's stringData wins.
      sizes[(secret ? "" : std::string(field) + "/") + key] = size;
    }
  }
  std::size_t total = 0;
  for (const auto& [key, size] : sizes) total += size;
  if (total > kMaxDataBytes) {
    causes.push_back({"FieldValueTooLong", "Too long: must have at most " + std::to_string(kMaxDataBytes) + " bytes",
                      secret ? "data" : "[]"});
  }
}

void ValidatePod(const json& obj, std::vector<StatusCause>& causes) {
  const json spec = obj.value("spec", json::object());
  const json containers = spec.value("containers", json());
  if (!containers.is_array() || containers.empty()) {
    causes.push_back({"FieldValueRequired", "Required value", "spec.containers"});
    return;
  }
  for (std::size_t i = 0; i < containers.size(); ++i) {
    const std::string at = "spec.containers[" + std::to_string(i) + "]";
    const json& c = containers[i];
    if (!c.is_object()) {
      causes.push_back({"FieldValueInvalid", "must be an object", at});
      continue;
    }
    std::string name = c.value("name", "");
    if (name.empty()) {
      causes.push_back({"FieldValueRequired", "Required value", at + ".name"});
    } else if (!IsDnsLabel(name)) {
      causes.push_back({"FieldValueInvalid",
                        "Invalid value: \"" + name +
                            "\": a lowercase RFC 1123 label must consist of "
                            "lower case alphanumeric characters or '-'",
                        at + ".name"});
    }
    if (c.value("image", "").empty()) causes.push_back({"FieldValueRequired", "Required value", at + ".image"});
  }
}

}  // namespace

namespace {

// Top-level fields besides apiVersion, kind and metadata, per built-in kind
// (k8s.io/api); kinds not listed have spec and status.
const std::map<std::string, std::set<std::string>>& TopLevelFields() {
  static const std::map<std::string, std::set<std::string>> fields = {
      {"ConfigMap", {"data", "binaryData", "immutable"}},
      {"Secret", {"data", "stringData", "type", "immutable"}},
      {"ServiceAccount", {"secrets", "imagePullSecrets", "automountServiceAccountToken"}},
      {"Endpoints", {"subsets"}},
      {"Event",
       {"involvedObject", "reason", "message", "source", "firstTimestamp", "lastTimestamp", "count", "type",
        "eventTime", "series", "action", "related", "reportingComponent", "reportingInstance"}},
      {"Role", {"rules"}},
      {"ClusterRole", {"rules", "aggregationRule"}},
      {"RoleBinding", {"subjects", "roleRef"}},
      {"ClusterRoleBinding", {"subjects", "roleRef"}},
      {"RuntimeClass", {"handler", "overhead", "scheduling"}},
      {"PriorityClass", {"value", "globalDefault", "description", "preemptionPolicy"}},
  };
  return fields;
}

}  // namespace

std::vector<std::string> UnknownFields(const ResourceType& type, const json& obj) {
  static const std::set<std::string> kMetadata = {"name",
                                                  "generateName",
                                                  "namespace",
                                                  "selfLink",
                                                  "uid",
                                                  "resourceVersion",
                                                  "generation",
                                                  "creationTimestamp",
                                                  "deletionTimestamp",
                                                  "deletionGracePeriodSeconds",
                                                  "labels",
                                                  "annotations",
                                                  "ownerReferences",
                                                  "finalizers",
                                                  "managedFields"};
  std::vector<std::string> unknown;
  if (!obj.is_object()) return unknown;
  if (!type.from_crd) {
    auto own = TopLevelFields().find(type.kind);
    for (const auto& [key, value] : obj.items()) {
      if (key == "apiVersion" || key == "kind" || key == "metadata") continue;
      const bool known =
          own == TopLevelFields().end() ? (key == "spec" || key == "status") : own->second.count(key) > 0;
      if (!known) unknown.push_back(key);
    }
  }
  auto md = obj.find("metadata");
  if (md != obj.end() && md->is_object()) {
    for (const auto& [key, value] : md->items()) {
      if (!kMetadata.count(key)) unknown.push_back("metadata." + key);
    }
  }
  return unknown;
}

std::vector<StatusCause> Validate(const ResourceType& type, const json& obj) {
  std::vector<StatusCause> causes;
  const auto metadata = obj.find("metadata");
  if (metadata != obj.end() && !metadata->is_object() && !metadata->is_null()) {
    causes.push_back({"FieldValueInvalid", "must be an object", "metadata"});
    return causes;
  }
  const json md = metadata != obj.end() && metadata->is_object() ? *metadata : json::object();
  std::string name = md.value("name", "");
  if (name.empty()) {
    causes.push_back({"FieldValueRequired", "name or generateName is required", "metadata.name"});
  } else if (type.group == "rbac.authorization.k8s.io") {
    if (!IsPathSegmentName(name)) {
      causes.push_back({"FieldValueInvalid",
                        "Invalid value: \"" + name + "\": may not be '.' or '..' or contain '/' or '%'",
                        "metadata.name"});
    }
  } else if (NeedsLabelName(type) ? !IsDnsLabel(name) : !IsDnsSubdomain(name)) {
    causes.push_back({"FieldValueInvalid",
                      "Invalid value: \"" + name + "\": a lowercase RFC 1123 " +
                          (NeedsLabelName(type) ? "label" : "subdomain") +
                          " must consist of lower case alphanumeric characters, '-' or '.', and must start and end "
                          "with an alphanumeric character",
                      "metadata.name"});
  }
  ValidateLabels(md.value("labels", json()), "metadata.labels", causes);
  const json annotations = md.value("annotations", json());
  if (!annotations.is_null() && !annotations.is_object())
    causes.push_back({"FieldValueInvalid", "must be a map of strings", "metadata.annotations"});
  if (annotations.is_object()) {
    // kube-apiserver's TotalAnnotationSizeLimitB: keys and values together.
    constexpr std::size_t kMaxAnnotationBytes = 256 * 1024;
    std::size_t total = 0;
    for (const auto& [key, value] : annotations.items())
      total += key.size() + (value.is_string() ? value.get_ref<const std::string&>().size() : 0);
    if (total > kMaxAnnotationBytes) {
      causes.push_back({"FieldValueTooLong",
                        "Too long: must have at most " + std::to_string(kMaxAnnotationBytes) + " bytes",
                        "metadata.annotations"});
    }
  }
  if (type.group.empty() && type.resource == "pods") ValidatePod(obj, causes);
  if (type.group.empty() && type.resource == "resourcequotas") ValidateQuotaHard(obj, causes);
  if (type.group.empty() && (type.resource == "configmaps" || type.resource == "secrets")) {
    ValidateData(obj, type.resource == "secrets", causes);
  }
  return causes;
}

bool SpecChanged(const json& before, const json& after) {
  for (const auto& [k, v] : after.items()) {
    if (k == "metadata" || k == "status") continue;
    if (!before.contains(k) || before[k] != v) return true;
  }
  for (const auto& [k, v] : before.items()) {
    if (k != "metadata" && k != "status" && !after.contains(k)) return true;
  }
  return false;
}

namespace {

std::string Age(const json& obj, TimePoint now) {
  std::string ts = obj["metadata"].value("creationTimestamp", "");
  std::tm tm{};
  if (ts.size() < 19 || strptime(ts.c_str(), "%Y-%m-%dT%H:%M:%S", &tm) == nullptr) return "<unknown>";
  auto created = std::chrono::system_clock::from_time_t(timegm(&tm));
  auto secs = std::chrono::duration_cast<std::chrono::seconds>(now - created).count();
  if (secs < 0) secs = 0;
  if (secs < 120) return std::to_string(secs) + "s";
  if (secs < 7200) return std::to_string(secs / 60) + "m";
  if (secs < 172800) return std::to_string(secs / 3600) + "h";
  return std::to_string(secs / 86400) + "d";
}

json Column(const std::string& name, const std::string& format = "") {
  return {{"name", name}, {"type", "string"}, {"format", format}, {"description", name}, {"priority", 0}};
}

}  // namespace

json ToTable(const ResourceType& type, const std::vector<const json*>& objects, const std::string& resource_version,
             TimePoint now, bool include_object) {
  const bool pods = type.group.empty() && type.resource == "pods";
  const bool nodes = type.group.empty() && type.resource == "nodes";
  const bool namespaces = type.group.empty() && type.resource == "namespaces";
  json columns = json::array({Column("Name", "name")});
  if (pods || namespaces) columns.push_back(Column("Status"));
  if (pods) columns.push_back(Column("Node"));
  if (nodes) columns.push_back(Column("Status"));
  columns.push_back(Column("Age"));
  json rows = json::array();
  for (const json* obj : objects) {
    json cells = json::array({(*obj)["metadata"].value("name", "")});
    const json status = obj->value("status", json::object());
    if (pods) {
      cells.push_back(obj->contains("metadata") && (*obj)["metadata"].contains("deletionTimestamp")
                          ? "Terminating"
                          : status.value("phase", "Pending"));
      cells.push_back(obj->value("spec", json::object()).value("nodeName", "<none>"));
    }
    if (namespaces) cells.push_back(status.value("phase", "Active"));
    if (nodes) {
      std::string ready = "NotReady";
      for (const auto& c : status.value("conditions", json::array())) {
        if (c.value("type", "") == "Ready" && c.value("status", "") == "True") ready = "Ready";
      }
      cells.push_back(ready);
    }
    cells.push_back(Age(*obj, now));
    json row_object;
    if (include_object) {
      row_object = *obj;
    } else {
      row_object = {
          {"kind", "PartialObjectMetadata"}, {"apiVersion", "meta.k8s.io/v1"}, {"metadata", (*obj)["metadata"]}};
    }
    rows.push_back({{"cells", std::move(cells)}, {"object", std::move(row_object)}});
  }
  return {{"kind", "Table"},
          {"apiVersion", "meta.k8s.io/v1"},
          {"metadata", {{"resourceVersion", resource_version}}},
          {"columnDefinitions", std::move(columns)},
          {"rows", std::move(rows)}};
}

}  // namespace septa::kubesim
