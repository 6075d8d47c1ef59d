#include "services/kubesim/quota.h"

#include <algorithm>
#include <optional>
#include <set>

#include "common/pod_requests.h"
#include "common/quantity.h"

namespace septa::kubesim {

using nlohmann::json;

namespace {

// The resources that, when a quota limits them, every container must set
// (the API server keeps this rule for compatibility and applies it to these
// six only).
const std::set<std::string> kMustSpecify = {"cpu",    "limits.cpu",   "limits.memory",
                                            "memory", "requests.cpu", "requests.memory"};

const std::set<std::string> kChargedNames = {"count/pods",
                                             "pods",
                                             "cpu",
                                             "memory",
                                             "ephemeral-storage",
                                             "requests.cpu",
                                             "requests.memory",
                                             "requests.ephemeral-storage",
                                             "limits.cpu",
                                             "limits.memory",
                                             "limits.ephemeral-storage"};

// Names without a domain, and those in kubernetes.io, are Kubernetes' own.
bool IsNative(const std::string& name) {
  return name.find('/') == std::string::npos || name.find("kubernetes.io/") != std::string::npos;
}

bool IsExtended(const std::string& name) { return !IsNative(name) && !name.starts_with("requests."); }

// The quota resource names the API server knows without a domain.
const std::set<std::string> kStandardQuotaNames = {"cpu",
                                                   "memory",
                                                   "ephemeral-storage",
                                                   "requests.cpu",
                                                   "requests.memory",
                                                   "requests.storage",
                                                   "requests.ephemeral-storage",
                                                   "limits.cpu",
                                                   "limits.memory",
                                                   "limits.ephemeral-storage",
                                                   "pods",
                                                   "services",
                                                   "replicationcontrollers",
                                                   "resourcequotas",
                                                   "secrets",
                                                   "persistentvolumeclaims",
                                                   "configmaps",
                                                   "services.nodeports",
                                                   "services.loadbalancers"};

std::optional<Amount> ParseAmount(const json& value) {
  std::string text;
  if (value.is_string()) text = value.get<std::string>();
  else if (value.is_number_integer() || value.is_number_unsigned()) text = value.dump();
  else if (value.is_number_float()) text = value.dump();
  else return std::nullopt;
  auto milli = ParseQuantityMilli(text);
  if (!milli.ok()) return std::nullopt;
  return Amount{*milli, text.size() >= 2 && text.back() == 'i'};
}

ApiError BadQuantity() {
  return BadRequestError(
      "Pod in version \"v1\" cannot be handled as a Pod: quantities must match the regular expression "
      "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'");
}

// One container's requests or limits.
ApiResult<ResourceAmounts> ReadList(const json& container, const char* which) {
  ResourceAmounts out;
  const json resources = container.value("resources", json::object());
  if (!resources.is_object() || !resources.contains(which) || !resources[which].is_object()) return out;
  for (const auto& [name, value] : resources[which].items()) {
    auto amount = ParseAmount(value);
    if (!amount) return BadQuantity();
    out[name] = *amount;
  }
  return out;
}

// A container's requests; those it leaves out default to its limits, as the
// API server defaults them when it stores a pod.
ApiResult<ResourceAmounts> ReadRequests(const json& container) {
  auto requests = ReadList(container, "requests");
  auto limits = ReadList(container, "limits");
  if (!requests.ok()) return requests;
  if (!limits.ok()) return limits;
  auto& merged = *requests;
  for (const auto& [name, amount] : *limits) merged.emplace(name, amount);
  return requests;
}

std::vector<json> ContainersOf(const json& pod, const char* which) {
  const json spec = pod.value("spec", json::object());
  if (!spec.is_object() || !spec.contains(which) || !spec[which].is_array()) return {};
  return spec[which].get<std::vector<json>>();
}

}  // namespace

ApiResult<ResourceAmounts> PodTotal(const json& pod, const char* which) {
  const auto read = [which](const json& c) {
    return std::string_view(which) == "requests" ? ReadRequests(c) : ReadList(c, which);
  };
  std::vector<ContainerAmounts<Amount>> containers;
  for (const char* list : {"containers", "initContainers"}) {
    for (const json& c : ContainersOf(pod, list)) {
      KUBESIM_ASSIGN_OR_RETURN(ResourceAmounts amounts, read(c));
      containers.push_back(
          {RoleOf(std::string_view(list) == "initContainers", c.value("restartPolicy", "")), std::move(amounts)});
    }
  }
  ResourceAmounts total = EffectivePodAmounts(containers);
  const json overhead = pod.value("spec", json::object()).value("overhead", json::object());
  if (overhead.is_object()) {
    for (const auto& [name, value] : overhead.items()) {
      auto amount = ParseAmount(value);
      if (!amount) return BadQuantity();
      total[name] += *amount;
    }
  }
  return total;
}

namespace {

// The resource names one container's (or the pod's) requests and limits
// account for, as the API server's quota evaluator names them.
ResourceAmounts ComputeUsage(const ResourceAmounts& requests, const ResourceAmounts& limits) {
  ResourceAmounts usage;
  usage["pods"] = Amount{1000, false};
  for (const char* plain : {"cpu", "memory", "ephemeral-storage"}) {
    if (auto r = requests.find(plain); r != requests.end()) {
      usage[plain] = r->second;
      usage[std::string("requests.") + plain] = r->second;
    }
    if (auto l = limits.find(plain); l != limits.end()) usage[std::string("limits.") + plain] = l->second;
  }
  for (const auto& [name, amount] : requests) {
    if (name.starts_with("hugepages-")) {
      usage[name] = amount;
      usage["requests." + name] = amount;
    }
    if (IsExtended(name)) usage["requests." + name] = amount;
  }
  return usage;
}

// The quota's hard limits that pods are charged for.
ResourceAmounts ChargedHard(const json& quota) {
  ResourceAmounts hard;
  const json spec_hard = quota.value("spec", json::object()).value("hard", json::object());
  if (!spec_hard.is_object()) return hard;
  for (const auto& [name, value] : spec_hard.items()) {
    if (!ChargedForPods(name)) continue;
    if (auto amount = ParseAmount(value)) hard[name] = *amount;
  }
  return hard;
}

// status.used as the quota controller last wrote it (absent: nothing used).
ResourceAmounts RecordedUse(const json& quota) {
  ResourceAmounts used;
  const json recorded = quota.value("status", json::object()).value("used", json::object());
  if (!recorded.is_object()) return used;
  for (const auto& [name, value] : recorded.items()) {
    if (auto amount = ParseAmount(value)) used[name] = *amount;
  }
  return used;
}

ResourceAmounts UsedBy(const std::vector<ObjectPtr>& pods) {
  ResourceAmounts used;
  for (const ObjectPtr& pod : pods) {
    auto usage = PodUsage(*pod);
    if (!usage.ok()) continue;  // stored before a quota could check it
    for (const auto& [name, amount] : *usage) used[name] += amount;
  }
  return used;
}

std::string PrettyPrint(const ResourceAmounts& amounts, const std::set<std::string>& names) {
  std::string out;
  for (const std::string& name : names) {
    auto it = amounts.find(name);
    out += (out.empty() ? "" : ",") + name + "=" + FormatAmount(it == amounts.end() ? Amount{} : it->second);
  }
  return out;
}

void DefaultRequestsToLimits(json& pod) {
  for (const char* which : {"containers", "initContainers"}) {
    if (!pod["spec"].contains(which) || !pod["spec"][which].is_array()) continue;
    for (json& c : pod["spec"][which]) {
      if (!c.is_object() || !c.contains("resources") || !c["resources"].is_object()) continue;
      json& r = c["resources"];
      if (!r.contains("limits") || !r["limits"].is_object()) continue;
      for (const auto& [name, value] : r["limits"].items()) {
        if (!r.contains("requests") || !r["requests"].is_object()) r["requests"] = json::object();
        if (!r["requests"].contains(name)) r["requests"][name] = value;
      }
    }
  }
}

// A LimitRange item of type Container after the API server's defaulting:
// `default` falls back to `max`, `defaultRequest` to `default`, then `min`.
std::pair<json, json> ContainerDefaults(const json& item) {
  json limits = item.value("default", json::object());
  json requests = item.value("defaultRequest", json::object());
  if (!limits.is_object()) limits = json::object();
  if (!requests.is_object()) requests = json::object();
  const json max = item.value("max", json::object());
  const json min = item.value("min", json::object());
  if (max.is_object())
    for (const auto& [k, v] : max.items()) limits.emplace(k, v);
  for (const auto& [k, v] : limits.items()) requests.emplace(k, v);
  if (min.is_object())
    for (const auto& [k, v] : min.items()) requests.emplace(k, v);
  return {limits, requests};
}

// LimitRanger: containers get the defaults for what they leave unset; the
// first LimitRange (by name) to give a default wins.
void ApplyLimitRanges(json& pod, const std::vector<ObjectPtr>& limit_ranges) {
  for (const ObjectPtr& range : limit_ranges) {
    const json items = range->value("spec", json::object()).value("limits", json::array());
    if (!items.is_array()) continue;
    for (const json& item : items) {
      if (!item.is_object() || item.value("type", "") != "Container") continue;
      auto [limits, requests] = ContainerDefaults(item);
      for (const char* which : {"containers", "initContainers"}) {
        if (!pod["spec"].contains(which) || !pod["spec"][which].is_array()) continue;
        for (json& c : pod["spec"][which]) {
          if (!c.is_object()) continue;
          if (!c.contains("resources") || !c["resources"].is_object()) c["resources"] = json::object();
          json& r = c["resources"];
          const std::pair<const char*, const json*> defaults[] = {{"limits", &limits}, {"requests", &requests}};
          for (const auto& [into, from] : defaults) {
            if (from->empty()) continue;
            if (!r.contains(into) || !r[into].is_object()) r[into] = json::object();
            for (const auto& [k, v] : from->items()) r[into].emplace(k, v);
          }
        }
      }
    }
  }
}

std::string QosClass(const json& pod) {
  bool any = false, guaranteed = true;
  for (const char* which : {"containers", "initContainers"}) {
    for (const json& c : ContainersOf(pod, which)) {
      auto requests = ReadList(c, "requests");
      auto limits = ReadList(c, "limits");
      if (!requests.ok() || !limits.ok()) continue;
      const auto& req = *requests;
      const auto& lim = *limits;
      for (const char* r : {"cpu", "memory"}) {
        auto q = req.find(r), l = lim.find(r);
        if ((q != req.end() && q->second.milli != 0) || (l != lim.end() && l->second.milli != 0)) any = true;
        if (l == lim.end() || l->second.milli == 0 || (q != req.end() && q->second.milli != l->second.milli))
          guaranteed = false;
      }
    }
  }
  if (!any) return "BestEffort";
  return guaranteed ? "Guaranteed" : "Burstable";
}

// "must specify limits.cpu for: a,b; requests.cpu for: a" or "".
std::string MissingConstraints(const json& pod, const ResourceAmounts& hard) {
  std::set<std::string> required;
  for (const auto& [name, amount] : hard)
    if (kMustSpecify.contains(name)) required.insert(name);
  if (required.empty()) return "";
  std::map<std::string, std::set<std::string>> missing;
  for (const char* which : {"containers", "initContainers"}) {
    for (const json& c : ContainersOf(pod, which)) {
      auto requests = ReadList(c, "requests");
      auto limits = ReadList(c, "limits");
      if (!requests.ok() || !limits.ok()) continue;
      ResourceAmounts usage = ComputeUsage(*requests, *limits);
      for (const std::string& r : required)
        if (!usage.contains(r)) missing[r].insert(c.value("name", ""));
    }
  }
  if (missing.empty()) return "";
  std::string out = "must specify ";
  bool first_resource = true;
  for (const auto& [resource, containers] : missing) {
    out += (first_resource ? "" : "; ") + resource + " for: ";
    first_resource = false;
    bool first = true;
    for (const std::string& c : containers) {
      out += (first ? "" : ",") + c;
      first = false;
    }
  }
  return out;
}

ApiError Forbidden(const json& pod, const std::string& why) {
  const std::string name = pod["metadata"].value("name", "");
  ApiError e = ForbiddenError("pods \"" + name + "\" is forbidden: " + why);
  e.name = name;
  e.kind = "pods";
  return e;
}

}  // namespace

void ValidateQuotaHard(const json& quota, std::vector<StatusCause>& causes) {
  const json hard = quota.value("spec", json::object()).value("hard", json::object());
  if (!hard.is_object()) return;
  for (const auto& [name, value] : hard.items()) {
    const std::string field = "spec.hard[" + name + "]";
    const bool standard =
        kStandardQuotaNames.contains(name) || name.starts_with("hugepages-") || name.starts_with("requests.hugepages-");
    if (name.find('/') == std::string::npos && !standard) {
      causes.push_back(
          {"FieldValueInvalid", "Invalid value: \"" + name + "\": must be a standard resource for quota", field});
    }
    const std::string text = value.is_string() ? value.get<std::string>() : value.dump();
    auto amount = ParseAmount(value);
    if (!amount) {
      causes.push_back({"FieldValueInvalid",
                        "Invalid value: \"" + text + "\": " +
                            (text.starts_with("-") ? "must be greater than or equal to 0"
                                                   : "quantities must match the regular expression "
                                                     "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"),
                        field});
    } else if (!IsNative(name) && amount->milli % 1000 != 0) {
      causes.push_back({"FieldValueInvalid", "Invalid value: \"" + text + "\": must be an integer", field});
    }
  }
}

std::string FormatAmount(const Amount& amount) { return FormatQuantityMilli(amount.milli, amount.binary); }

bool PodFinished(const json& pod) {
  const std::string phase = pod.value("status", json::object()).value("phase", "");
  return phase == "Succeeded" || phase == "Failed" ||
         pod.value("metadata", json::object()).contains("deletionTimestamp");
}

bool ChargedForPods(const std::string& resource) {
  return kChargedNames.contains(resource) || resource.starts_with("hugepages-") ||
         resource.starts_with("requests.hugepages-") || (!IsNative(resource) && resource.starts_with("requests."));
}

ApiResult<ResourceAmounts> PodUsage(const json& pod) {
  ResourceAmounts usage;
  if (!PodFinished(pod)) {
    KUBESIM_ASSIGN_OR_RETURN(const ResourceAmounts requests, PodTotal(pod, "requests"));
    KUBESIM_ASSIGN_OR_RETURN(const ResourceAmounts limits, PodTotal(pod, "limits"));
    usage = ComputeUsage(requests, limits);
  }
  usage["count/pods"] = Amount{1000, false};
  return usage;
}

ApiResult<AdmittedPod> AdmitPod(json pod, const PodAdmissionContext& context) {
  if (!pod.contains("spec") || !pod["spec"].is_object()) pod["spec"] = json::object();
  DefaultRequestsToLimits(pod);
  ApplyLimitRanges(pod, context.limit_ranges);
  KUBESIM_ASSIGN_OR_RETURN(ResourceAmounts usage, PodUsage(pod));
  pod["status"]["qosClass"] = QosClass(pod);
  AdmittedPod admitted{std::move(pod), std::move(usage)};

  // As the API server does: every quota's constraints first, then usage.
  std::vector<std::pair<const json*, ResourceAmounts>> limiting;  // (quota, charged hard)
  for (const ObjectPtr& quota : context.quotas) {
    ResourceAmounts hard = ChargedHard(*quota);
    if (hard.empty()) continue;
    if (std::string missing = MissingConstraints(admitted.pod, hard); !missing.empty())
      return Forbidden(admitted.pod, "failed quota: " + (*quota)["metadata"].value("name", "") + ": " + missing);
    limiting.emplace_back(quota.get(), std::move(hard));
  }
  const ResourceAmounts& requested = admitted.usage;
  for (const auto& [quota, hard] : limiting) {
    const ResourceAmounts used = RecordedUse(*quota);
    std::set<std::string> exceeded;
    for (const auto& [resource, amount] : requested) {
      auto limit = hard.find(resource);
      if (limit == hard.end()) continue;
      auto before = used.find(resource);
      long long after = amount.milli + (before == used.end() ? 0 : before->second.milli);
      if (after > limit->second.milli) exceeded.insert(resource);
    }
    if (!exceeded.empty()) {
      return Forbidden(admitted.pod, "exceeded quota: " + (*quota)["metadata"].value("name", "") + ", requested: " +
                                         PrettyPrint(requested, exceeded) + ", used: " + PrettyPrint(used, exceeded) +
                                         ", limited: " + PrettyPrint(hard, exceeded));
    }
  }
  return admitted;
}

json QuotaStatus(const json& quota, const std::vector<ObjectPtr>& pods) {
  json status = {{"hard", json::object()}, {"used", json::object()}};
  const json spec_hard = quota.value("spec", json::object()).value("hard", json::object());
  if (!spec_hard.is_object()) return status;
  const ResourceAmounts used = UsedBy(pods);
  for (const auto& [name, value] : spec_hard.items()) {
    auto amount = ParseAmount(value);
    status["hard"][name] = amount ? json(FormatAmount(*amount)) : value;
    if (!ChargedForPods(name)) continue;
    auto it = used.find(name);
    Amount sum = it == used.end() ? Amount{} : it->second;
    if (sum.milli == 0 && amount) sum.binary = amount->binary;
    status["used"][name] = FormatAmount(sum);
  }
  return status;
}

json ChargeQuota(const json& quota, const ResourceAmounts& usage, bool release) {
  json status = quota.value("status", json::object());
  if (!status.is_object()) status = json::object();
  ResourceAmounts used = RecordedUse(quota);
  for (const auto& [name, hard] : ChargedHard(quota)) {
    Amount& total = used[name];
    auto it = usage.find(name);
    if (it != usage.end()) {
      if (total.milli == 0) total.binary = it->second.binary;
      total.milli = release ? std::max(0LL, total.milli - it->second.milli) : total.milli + it->second.milli;
    }
    if (total.milli == 0) total.binary = hard.binary;
    status["used"][name] = FormatAmount(total);
  }
  return status;
}

}  // namespace septa::kubesim
