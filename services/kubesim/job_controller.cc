// The Job controller (pkg/controller/job in Kubernetes) for NonIndexed jobs:
// keeps min(parallelism, completions - succeeded) pods active; a failed pod
// is replaced until more than backoffLimit have failed (the Job then fails
// with BackoffLimitExceeded); Complete once `completions` pods succeeded.
// Counts come from the pods that exist and never go down, so deleting a
// finished pod does not undo its count. Retries start at once: kubesim has
// no backoff delay between them.
#include <algorithm>

#include "services/kubesim/objects.h"
#include "services/kubesim/workload_controllers.h"
#include "services/kubesim/workload_util.h"

namespace septa::kubesim {

using nlohmann::json;
using namespace workload;

namespace {

bool Finished(const json& status) {
  for (const char* type : {"Complete", "Failed"}) {
    const json c = Condition(status, type);
    if (c.is_object() && c.value("status", "") == "True") return true;
  }
  return false;
}

// Container restarts of the job's running pods: failures under restartPolicy OnFailure.
long long Restarts(const std::vector<ObjectPtr>& active) {
  long long restarts = 0;
  for (const auto& p : active)
    for (const auto& c : Child(Child(*p, "status"), "containerStatuses")) restarts += Int(c, "restartCount", 0);
  return restarts;
}

}  // namespace

void WorkloadControllers::SyncJob(const json& job, const std::vector<ObjectPtr>& pods) {
  const TimePoint now = cluster_.clock.Now();
  const std::string ts = FormatRfc3339(now);
  const json& spec = Child(job, "spec");
  const json& status = Child(job, "status");
  std::vector<ObjectPtr> active;
  long long succeeded = 0, failed = 0, ready = 0;
  for (const auto& p : pods) {
    const std::string phase = Phase(*p);
    if (phase == "Succeeded") ++succeeded;
    else if (phase == "Failed") ++failed;
    else if (!Deleting(*p)) active.push_back(p);
  }
  for (const auto& p : active) ready += Ready(*p);
  succeeded = std::max(succeeded, Int(status, "succeeded", 0));
  failed = std::max(failed, Int(status, "failed", 0));

  json next = status;
  if (Finished(status)) {
    for (const auto& p : active) Delete("", "pods", *p);
    return;
  }
  const bool suspended = spec.value("suspend", false);
  if (!suspended && !next.contains("startTime")) next["startTime"] = ts;
  const long long parallelism = Int(spec, "parallelism", 1);
  const bool has_completions = spec.contains("completions") && spec["completions"].is_number_integer();
  const long long completions = Int(spec, "completions", 1);
  const long long backoff_limit = Int(spec, "backoffLimit", 6);
  const bool on_failure = Child(Child(spec, "template"), "spec").value("restartPolicy", "") == "OnFailure";
  const long long restarts = on_failure ? Restarts(active) : 0;

  std::string failure_reason, failure_message;
  if (failed > backoff_limit || (on_failure && (backoff_limit == 0 ? restarts > 0 : restarts >= backoff_limit))) {
    failure_reason = "BackoffLimitExceeded";
    failure_message = "Job has reached the specified backoff limit";
  } else if (auto running = Since(next.value("startTime", ""), now);
             spec.contains("activeDeadlineSeconds") && running &&
             *running >= std::chrono::seconds(Int(spec, "activeDeadlineSeconds", 0))) {
    failure_reason = "DeadlineExceeded";
    failure_message = "Job was active longer than specified deadline";
  }
  const bool complete =
      failure_reason.empty() && (has_completions ? succeeded >= completions : succeeded > 0 && active.empty());
  long long want = 0;
  if (!suspended && failure_reason.empty() && !complete) {
    want = has_completions ? std::min(parallelism, completions - succeeded) : (succeeded > 0 ? 0 : parallelism);
  }
  const long long have = static_cast<long long>(active.size());
  if (have < want) {
    for (long long i = have; i < want; ++i)
      if (!CreatePod(job, Child(spec, "template"), "")) break;
  } else if (have > want) {
    // Newest first, as the Job controller removes surplus pods.
    std::sort(active.begin(), active.end(), [](const ObjectPtr& a, const ObjectPtr& b) {
      return Metadata(*a).value("creationTimestamp", "") > Metadata(*b).value("creationTimestamp", "");
    });
    for (long long i = 0; i < have - want; ++i) Delete("", "pods", *active[static_cast<std::size_t>(i)]);
  }

  const bool finished_now = complete || !failure_reason.empty();
  next["active"] = finished_now ? 0 : have;
  next["ready"] = finished_now ? 0 : ready;
  next["succeeded"] = succeeded;
  next["failed"] = failed;
  next["uncountedTerminatedPods"] = json::object();
  if (!failure_reason.empty()) {
    SetCondition(next, "Failed", "True", failure_reason, failure_message, ts, false);
  } else if (complete) {
    SetCondition(next, "Complete", "True", "CompletionsReached", "Reached expected number of succeeded pods", ts,
                 false);
    next["completionTime"] = ts;
  }
  if (next.contains("conditions")) {
    for (auto& c : next["conditions"]) {  // Job conditions also carry lastProbeTime
      if (c.is_object() && !c.contains("lastProbeTime")) c["lastProbeTime"] = c.value("lastTransitionTime", ts);
    }
  }
  SetStatus("jobs.batch", job, std::move(next));
}

}  // namespace septa::kubesim
