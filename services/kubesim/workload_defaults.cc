#include "services/kubesim/workload_defaults.h"

#include <charconv>

#include "services/kubesim/objects.h"
#include "services/kubesim/selectors.h"
#include "services/kubesim/service_ips.h"

namespace septa::kubesim {

using nlohmann::json;

namespace {

void Default(json& parent, const char* key, json value) {
  if (!parent.contains(key) || parent[key].is_null()) parent[key] = std::move(value);
}

bool IsIntOrPercent(const json& v) {
  if (v.is_number_integer()) return v.get<long long>() >= 0;
  if (!v.is_string()) return false;
  const std::string s = v.get<std::string>();
  if (s.size() < 2 || s.back() != '%') return false;
  return s.find_first_not_of("0123456789") == s.size() - 1;
}

void CheckNonNegative(const json& spec, const char* key, const std::string& at, std::vector<StatusCause>& causes) {
  if (!spec.contains(key)) return;
  const json& v = spec[key];
  if (!v.is_number_integer() || v.get<long long>() < 0)
    causes.push_back({"FieldValueInvalid", "must be greater than or equal to 0", at + "." + key});
}

void CheckAnnotations(const json& metadata, const std::string& at, std::vector<StatusCause>& causes) {
  const json annotations = metadata.value("annotations", json::object());
  if (!annotations.is_object()) return;  // Validate reports it
  std::string error;
  AnnotationInteger(annotations, kRunForAnnotation, 86'400'000LL * 366, &error);
  if (!error.empty()) causes.push_back({"FieldValueInvalid", error, at + ".annotations[" + kRunForAnnotation + "]"});
  error.clear();
  AnnotationInteger(annotations, kExitCodeAnnotation, 255, &error);
  if (!error.empty()) causes.push_back({"FieldValueInvalid", error, at + ".annotations[" + kExitCodeAnnotation + "]"});
}

// The pod template: the pod rules (containers, names) with paths under
// spec.template, and its labels against the selector.
void CheckTemplate(const json& spec, std::vector<StatusCause>& causes) {
  const json tmpl = spec.value("template", json::object());
  const json labels = tmpl.value("metadata", json::object()).value("labels", json::object());
  static const ResourceType kPodType = [] {
    ResourceType t;
    t.resource = "pods";
    t.kind = "Pod";
    return t;
  }();
  json pod = {{"metadata", {{"name", "template"}}}, {"spec", tmpl.value("spec", json::object())}};
  for (StatusCause cause : Validate(kPodType, pod)) {
    cause.field = "spec.template." + cause.field;
    causes.push_back(std::move(cause));
  }
  CheckAnnotations(tmpl.value("metadata", json::object()), "spec.template.metadata", causes);
  if (!spec.contains("selector") || !spec["selector"].is_object() || spec["selector"].empty()) {
    causes.push_back({"FieldValueRequired", "Required value", "spec.selector"});
    return;
  }
  auto selector = LabelSelector::FromJson(spec["selector"]);
  if (!selector.ok()) {
    causes.push_back({"FieldValueInvalid", selector.error().message, "spec.selector"});
  } else if (selector->empty()) {
    causes.push_back({"FieldValueInvalid", "empty selector is invalid", "spec.selector"});
  } else if (!selector->Matches(labels)) {
    causes.push_back({"FieldValueInvalid",
                      "Invalid value: " + labels.dump() + ": `selector` does not match template `labels`",
                      "spec.template.metadata.labels"});
  }
}

void DefaultDeployment(json& spec, std::vector<StatusCause>& causes) {
  Default(spec, "replicas", 1);
  Default(spec, "revisionHistoryLimit", 10);
  Default(spec, "progressDeadlineSeconds", 600);
  Default(spec, "strategy", json::object());
  json& strategy = spec["strategy"];
  Default(strategy, "type", "RollingUpdate");
  const std::string type = strategy["type"].is_string() ? strategy["type"].get<std::string>() : "";
  if (type == "RollingUpdate") {
    Default(strategy, "rollingUpdate", json::object());
    Default(strategy["rollingUpdate"], "maxSurge", "25%");
    Default(strategy["rollingUpdate"], "maxUnavailable", "25%");
    for (const char* key : {"maxSurge", "maxUnavailable"}) {
      if (!IsIntOrPercent(strategy["rollingUpdate"][key]))
        causes.push_back({"FieldValueInvalid", "must be a non-negative integer or percentage",
                          std::string("spec.strategy.rollingUpdate.") + key});
    }
  } else if (type == "Recreate") {
    if (strategy.contains("rollingUpdate"))
      causes.push_back({"FieldValueForbidden", "may not be specified when strategy `type` is 'Recreate'",
                        "spec.strategy.rollingUpdate"});
  } else {
    causes.push_back(
        {"FieldValueNotSupported",
         "Unsupported value: " + strategy["type"].dump() + ": supported values: \"Recreate\", \"RollingUpdate\"",
         "spec.strategy.type"});
  }
}

void DefaultStatefulSet(json& spec, std::vector<StatusCause>& causes) {
  Default(spec, "replicas", 1);
  Default(spec, "revisionHistoryLimit", 10);
  Default(spec, "podManagementPolicy", "OrderedReady");
  Default(spec, "updateStrategy", json::object());
  json& strategy = spec["updateStrategy"];
  Default(strategy, "type", "RollingUpdate");
  if (strategy["type"] == "RollingUpdate") {
    Default(strategy, "rollingUpdate", json::object());
    Default(strategy["rollingUpdate"], "partition", 0);
    CheckNonNegative(strategy["rollingUpdate"], "partition", "spec.updateStrategy.rollingUpdate", causes);
  } else if (strategy["type"] != "OnDelete") {
    causes.push_back(
        {"FieldValueNotSupported",
         "Unsupported value: " + strategy["type"].dump() + ": supported values: \"OnDelete\", \"RollingUpdate\"",
         "spec.updateStrategy.type"});
  }
  const json policy = spec["podManagementPolicy"];
  if (policy != "OrderedReady" && policy != "Parallel") {
    causes.push_back({"FieldValueNotSupported",
                      "Unsupported value: " + policy.dump() + ": supported values: \"OrderedReady\", \"Parallel\"",
                      "spec.podManagementPolicy"});
  }
}

// A Job's selector is generated from its uid unless spec.manualSelector, and
// its pods carry the job's name and uid (batch/v1 Job strategy).
void DefaultJob(json& obj, std::vector<StatusCause>& causes) {
  json& spec = obj["spec"];
  if (!spec.contains("completions") && !spec.contains("parallelism")) spec["completions"] = 1;
  Default(spec, "parallelism", 1);
  Default(spec, "backoffLimit", 6);
  Default(spec, "completionMode", "NonIndexed");
  Default(spec, "suspend", false);
  for (const char* key : {"completions", "parallelism", "backoffLimit", "activeDeadlineSeconds"})
    CheckNonNegative(spec, key, "spec", causes);
  if (spec["completionMode"] != "NonIndexed") {
    causes.push_back(
        {"FieldValueNotSupported",
         "Unsupported value: " + spec["completionMode"].dump() + ": supported values: \"NonIndexed\" (kubesim)",
         "spec.completionMode"});
  }
  const std::string uid = obj["metadata"].value("uid", "");
  const std::string name = obj["metadata"].value("name", "");
  json& labels = spec["template"]["metadata"]["labels"];
  if (!labels.is_object()) labels = json::object();
  if (!spec.value("manualSelector", false)) {
    if (!spec.contains("selector")) spec["selector"] = {{"matchLabels", {{"batch.kubernetes.io/controller-uid", uid}}}};
    for (const char* key : {"batch.kubernetes.io/controller-uid", "controller-uid"}) Default(labels, key, uid);
  }
  for (const char* key : {"batch.kubernetes.io/job-name", "job-name"}) Default(labels, key, name);
  const json restart = spec["template"].value("spec", json::object()).value("restartPolicy", json());
  if (restart != "Never" && restart != "OnFailure") {
    causes.push_back({restart.is_null() ? "FieldValueRequired" : "FieldValueNotSupported",
                      restart.is_null()
                          ? "Required value: valid values: \"OnFailure\", \"Never\""
                          : "Unsupported value: " + restart.dump() + ": supported values: \"OnFailure\", \"Never\"",
                      "spec.template.spec.restartPolicy"});
  }
}

}  // namespace

std::optional<long long> AnnotationInteger(const json& annotations, const char* key, long long max,
                                           std::string* error) {
  if (!annotations.is_object() || !annotations.contains(key)) return std::nullopt;
  const json& v = annotations[key];
  const std::string text = v.is_string() ? v.get<std::string>() : v.dump();
  long long value = -1;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value < 0 || value > max) {
    if (error) *error = "Invalid value: " + v.dump() + ": must be an integer from 0 to " + std::to_string(max);
    return std::nullopt;
  }
  return value;
}

std::vector<StatusCause> DefaultAndValidateWorkload(const ResourceType& type, json& obj) {
  std::vector<StatusCause> causes;
  if (type.group.empty() && type.resource == "pods") {
    CheckAnnotations(obj.value("metadata", json::object()), "metadata", causes);
    return causes;
  }
  if (type.group.empty() && type.resource == "services") return DefaultAndValidateService(obj);
  const bool apps = type.group == "apps";
  const bool job = type.group == "batch" && type.resource == "jobs";
  if (!apps && !job) return causes;
  if (!obj.contains("spec") || !obj["spec"].is_object()) obj["spec"] = json::object();
  json& spec = obj["spec"];
  if (job) DefaultJob(obj, causes);
  else if (type.resource == "deployments") DefaultDeployment(spec, causes);
  else if (type.resource == "statefulsets") DefaultStatefulSet(spec, causes);
  else if (type.resource == "replicasets") Default(spec, "replicas", 1);
  else return causes;
  for (const char* key : {"replicas", "minReadySeconds", "revisionHistoryLimit", "progressDeadlineSeconds"})
    CheckNonNegative(spec, key, "spec", causes);
  CheckTemplate(spec, causes);
  return causes;
}

}  // namespace septa::kubesim
