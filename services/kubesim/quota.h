// Pod admission as the API server's built-in plugins do it, without storage
// access: defaulting of requests, LimitRanger's container defaults, the QoS
// class, and ResourceQuota's checks and usage. The caller gathers the
// namespace's LimitRanges, ResourceQuotas and pods (quota_controller.cc).
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "services/kubesim/api_error.h"
#include "services/kubesim/storage.h"

namespace septa::kubesim {

// An amount of one resource in thousandths of its unit, and whether it was
// written with a binary suffix (printed back the same way: "512Mi", "500m").
struct Amount {
  long long milli = 0;
  bool binary = false;
  // A sum is printed as its first non-zero amount was written, as
  // resource.Quantity.Add keeps its format.
  Amount& operator+=(const Amount& more) {
    if (milli == 0) binary = more.binary;
    milli += more.milli;
    return *this;
  }
  friend bool operator<(const Amount& a, const Amount& b) { return a.milli < b.milli; }
};
using ResourceAmounts = std::map<std::string, Amount>;  // sorted, as the API server prints them

std::string FormatAmount(const Amount& amount);

// True for the ResourceQuota resources that pods are charged for: pods,
// count/pods, cpu, memory, ephemeral-storage and their requests./limits.
// forms, hugepages, and extended resources in the `requests.` form
// (`requests.nvidia.com/gpu`). The bare `nvidia.com/gpu` is accepted in a
// quota by the API server but charged for nothing, as there.
bool ChargedForPods(const std::string& resource);

// Field causes for a ResourceQuota's spec.hard, as the API server validates
// it: names without a domain must be standard quota resources (`pods`,
// `requests.cpu`, `configmaps`, ...), quantities must parse and be at least
// zero, extended resources whole.
void ValidateQuotaHard(const nlohmann::json& quota, std::vector<StatusCause>& causes);

// Succeeded, Failed or being deleted: charged for `count/pods` only.
bool PodFinished(const nlohmann::json& pod);

// The pod's requests (those a container leaves out default to its limits)
// or limits, `which`, as the scheduler and quota count them: containers
// and sidecars add up, a plain init container counts with the sidecars
// started before it when that needs more (common/pod_requests.h), and the
// pod's overhead is added. The decoder's 400 when a quantity does not parse.
ApiResult<ResourceAmounts> PodTotal(const nlohmann::json& pod, const char* which);

// What a pod is charged: `count/pods` always; the rest unless it has
// finished (Succeeded/Failed): its PodTotal requests and limits. The
// decoder's 400 when a quantity does not parse.
ApiResult<ResourceAmounts> PodUsage(const nlohmann::json& pod);

// What the namespace of a new pod holds, read by the caller.
struct PodAdmissionContext {
  std::vector<ObjectPtr> limit_ranges;
  std::vector<ObjectPtr> quotas;  // with their status.used current
};

struct AdmittedPod {
  nlohmann::json pod;     // to store
  ResourceAmounts usage;  // to charge to the namespace's quotas once it is stored
};

// Admits a new pod: requests default to limits, LimitRange `defaultRequest` /
// `default` fill what containers leave unset, status.qosClass follows, then
// every ResourceQuota must hold it on top of its status.used: 403 `pods "x"
// is forbidden: exceeded quota: ...` or `failed quota: <name>: must specify
// ...` in the API server's words.
ApiResult<AdmittedPod> AdmitPod(nlohmann::json pod, const PodAdmissionContext& context);

// A ResourceQuota's status as the quota controller computes it: `hard` from
// the spec (canonical quantities), `used` what `pods` are charged for each of
// those resources.
nlohmann::json QuotaStatus(const nlohmann::json& quota, const std::vector<ObjectPtr>& pods);

// The quota's status with `usage` added to (a pod admitted) or, with
// `release`, taken from (a pod deleted) its `used`, as admission charges a
// quota without recounting every pod.
nlohmann::json ChargeQuota(const nlohmann::json& quota, const ResourceAmounts& usage, bool release = false);

}  // namespace septa::kubesim
