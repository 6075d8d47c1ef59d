// The ReplicaSet and Deployment controllers (pkg/controller/replicaset and
// pkg/controller/deployment in Kubernetes), one step per Tick().
#include <algorithm>
#include <tuple>

#include "services/kubesim/objects.h"
#include "services/kubesim/workload_controllers.h"
#include "services/kubesim/workload_util.h"

namespace septa::kubesim {

using nlohmann::json;
using namespace workload;

namespace {

constexpr const char* kRevisionAnnotation = "deployment.kubernetes.io/revision";
constexpr const char* kHashLabel = "pod-template-hash";
constexpr long long kMaxCreatesPerTick = 500;

long long Revision(const json& object) {
  const json& annotations = Child(Metadata(object), "annotations");
  const std::string text = annotations.value(kRevisionAnnotation, "");
  return text.empty() || text.find_first_not_of("0123456789") != std::string::npos || text.size() > 18
             ? 0
             : std::stoll(text);
}

// Which pods a ReplicaSet removes first when it scales down: unscheduled
// before scheduled, Pending before Running, not ready before ready, newer
// before older (the ranking of Kubernetes' ActivePods).
bool DeleteBefore(const ObjectPtr& a, const ObjectPtr& b) {
  auto rank = [](const json& p) {
    const bool scheduled = !Child(p, "spec").value("nodeName", "").empty();
    const std::string phase = Phase(p);
    const int phase_rank = phase == "Pending" ? 0 : phase == "Running" ? 2 : 1;
    return std::make_tuple(scheduled, phase_rank, Ready(p));
  };
  auto ra = rank(*a), rb = rank(*b);
  if (ra != rb) return ra < rb;
  return std::make_tuple(Metadata(*a).value("creationTimestamp", ""), Name(*a)) >
         std::make_tuple(Metadata(*b).value("creationTimestamp", ""), Name(*b));
}

long long SpecReplicas(const json& object) { return Int(Child(object, "spec"), "replicas", 1); }
long long StatusInt(const json& object, const char* key) { return Int(Child(object, "status"), key, 0); }

json TemplateWithoutHash(json pod_template) {
  if (pod_template.contains("metadata") && pod_template["metadata"].contains("labels")) {
    pod_template["metadata"]["labels"].erase(kHashLabel);
  }
  return pod_template;
}

}  // namespace

void WorkloadControllers::SyncReplicaSet(const json& rs, const std::vector<ObjectPtr>& pods) {
  const TimePoint now = cluster_.clock.Now();
  const json& spec = Child(rs, "spec");
  const long long want = SpecReplicas(rs);
  const long long min_ready = Int(spec, "minReadySeconds", 0);
  std::vector<ObjectPtr> active;
  for (const auto& p : pods)
    if (Active(*p)) active.push_back(p);
  long long ready = 0, available = 0;
  for (const auto& p : active) {
    ready += Ready(*p);
    available += Available(*p, min_ready, now);
  }
  const long long have = static_cast<long long>(active.size());
  if (have < want) {
    for (long long i = 0; i < std::min(want - have, kMaxCreatesPerTick); ++i)
      if (!CreatePod(rs, Child(spec, "template"), "")) break;
  } else if (have > want) {
    std::sort(active.begin(), active.end(), DeleteBefore);
    for (long long i = 0; i < have - want; ++i) Delete("", "pods", *active[static_cast<std::size_t>(i)]);
  }
  json status = Child(rs, "status");
  status["replicas"] = have;
  status["fullyLabeledReplicas"] = have;
  status["readyReplicas"] = ready;
  status["availableReplicas"] = available;
  status["observedGeneration"] = Metadata(rs).value("generation", 1);
  SetStatus("replicasets.apps", rs, std::move(status));
}

void WorkloadControllers::SyncDeployment(const json& d, const std::vector<ObjectPtr>& replica_sets,
                                         const ByOwner& pods) {
  const std::string now = FormatRfc3339(cluster_.clock.Now());
  const json& spec = Child(d, "spec");
  const json& status = Child(d, "status");
  const json& pod_template = Child(spec, "template");
  const long long replicas = SpecReplicas(d);
  const bool recreate = Child(spec, "strategy").value("type", "RollingUpdate") == "Recreate";
  const json& rolling = Child(Child(spec, "strategy"), "rollingUpdate");
  long long max_surge = recreate ? 0 : ScaledValue(rolling.value("maxSurge", json("25%")), replicas, true);
  long long max_unavailable = recreate ? 0 : ScaledValue(rolling.value("maxUnavailable", json("25%")), replicas, false);
  if (!recreate && max_surge == 0 && max_unavailable == 0) max_unavailable = 1;  // as Kubernetes resolves 0/0
  max_unavailable = std::min(max_unavailable, replicas);

  // The new ReplicaSet runs the current template; the others are old, oldest first.
  std::vector<ObjectPtr> sets = replica_sets;
  std::sort(sets.begin(), sets.end(), [](const ObjectPtr& a, const ObjectPtr& b) {
    return std::make_tuple(Metadata(*a).value("creationTimestamp", ""), Name(*a)) <
           std::make_tuple(Metadata(*b).value("creationTimestamp", ""), Name(*b));
  });
  ObjectPtr new_rs;
  std::vector<ObjectPtr> old;
  long long max_old_revision = 0;
  for (const auto& rs : sets) {
    if (Deleting(*rs)) continue;
    if (!new_rs && TemplateWithoutHash(Child(Child(*rs, "spec"), "template")) == pod_template) {
      new_rs = rs;
    } else {
      old.push_back(rs);
      max_old_revision = std::max(max_old_revision, Revision(*rs));
    }
  }
  auto active_pods = [&](const ObjectPtr& rs) {
    auto it = pods.find(Uid(*rs));
    if (it == pods.end()) return 0L;
    return static_cast<long>(
        std::count_if(it->second.begin(), it->second.end(), [](const ObjectPtr& p) { return !Terminal(*p); }));
  };
  auto scale = [&](const ObjectPtr& rs, long long to) {
    Change("replicasets.apps", *rs, [&](json& next) { next["spec"]["replicas"] = to; });
  };
  long long old_spec_total = 0;
  for (const auto& rs : old) old_spec_total += SpecReplicas(*rs);
  bool old_pods_running = false;
  for (const auto& rs : old) old_pods_running = old_pods_running || active_pods(rs) > 0;

  const bool paused = spec.value("paused", false);
  const long long collisions = Int(status, "collisionCount", 0);
  std::string progress_reason;  // set when this pass moved the rollout
  if (recreate && !paused) {    // Recreate: every old pod goes before any new one starts
    for (const auto& rs : old)
      if (SpecReplicas(*rs) > 0) scale(rs, 0);
  }
  if (!new_rs && !paused && (!recreate || (old_spec_total == 0 && !old_pods_running))) {
    json hashed = pod_template;
    const std::string hash = TemplateHash(collisions == 0 ? pod_template : json{pod_template, collisions});
    hashed["metadata"]["labels"][kHashLabel] = hash;
    json selector = Child(spec, "selector");
    selector["matchLabels"][kHashLabel] = hash;
    long long initial = replicas;
    if (!recreate) initial = std::clamp(replicas + max_surge - old_spec_total, 0LL, replicas);
    json rs = {{"apiVersion", "apps/v1"},
               {"kind", "ReplicaSet"},
               {"metadata",
                {{"name", Name(d) + "-" + hash},
                 {"namespace", Metadata(d).value("namespace", "")},
                 {"labels", hashed["metadata"]["labels"]},
                 {"annotations", {{kRevisionAnnotation, std::to_string(max_old_revision + 1)}}},
                 {"ownerReferences", json::array({ControllerReference(d)})}}},
               {"spec",
                {{"replicas", initial},
                 {"minReadySeconds", Int(spec, "minReadySeconds", 0)},
                 {"selector", selector},
                 {"template", hashed}}}};
    auto created = api_.CreateObject("apps", "replicasets", std::move(rs));
    if (!created.ok()) {
      // A ReplicaSet of that name runs another template: hash again, as
      // Kubernetes does with status.collisionCount.
      if (created.error().reason == "AlreadyExists")
        Change("deployments.apps", d, [&](json& next) { next["status"]["collisionCount"] = collisions + 1; });
      return;
    }
    new_rs = *created;
    progress_reason = "NewReplicaSetCreated";
  } else if (new_rs && !paused) {
    // A rollback makes an old template new again: it takes the next revision.
    if (Revision(*new_rs) <= max_old_revision) {
      Change("replicasets.apps", *new_rs, [&](json& next) {
        next["metadata"]["annotations"][kRevisionAnnotation] = std::to_string(max_old_revision + 1);
      });
    }
    const long long new_spec = SpecReplicas(*new_rs);
    if (recreate) {
      if (old_spec_total == 0 && !old_pods_running && new_spec != replicas) {
        scale(new_rs, replicas);
        progress_reason = "ReplicaSetUpdated";
      }
    } else if (old_spec_total == 0) {
      if (new_spec != replicas) scale(new_rs, replicas);  // a scale, not a rollout
    } else {
      // Surge the new ReplicaSet within maxSurge...
      const long long total = old_spec_total + new_spec;
      long long target = new_spec;
      if (total < replicas + max_surge) target = new_spec + std::min(replicas + max_surge - total, replicas - new_spec);
      if (target != new_spec) {
        scale(new_rs, target);
        progress_reason = "ReplicaSetUpdated";
      } else {
        // ... then shrink the old ones while keeping replicas - maxUnavailable available.
        const long long min_available = replicas - max_unavailable;
        const long long new_unavailable = new_spec - StatusInt(*new_rs, "availableReplicas");
        long long budget = old_spec_total + new_spec - min_available - new_unavailable;
        std::map<std::string, long long> spec_of;
        for (const auto& rs : old) spec_of[Uid(*rs)] = SpecReplicas(*rs);
        // Unavailable old pods go first: removing them costs no availability.
        for (const auto& rs : old) {
          if (budget <= 0) break;
          long long unhealthy = spec_of[Uid(*rs)] - StatusInt(*rs, "availableReplicas");
          long long cut = std::min(budget, std::max(0LL, unhealthy));
          spec_of[Uid(*rs)] -= cut;
          budget -= cut;
        }
        long long available = StatusInt(*new_rs, "availableReplicas");
        for (const auto& rs : old) available += StatusInt(*rs, "availableReplicas");
        long long room = available - min_available;
        for (const auto& rs : old) {
          if (room <= 0) break;
          long long cut = std::min(spec_of[Uid(*rs)], room);
          spec_of[Uid(*rs)] -= cut;
          room -= cut;
        }
        for (const auto& rs : old) {
          if (spec_of[Uid(*rs)] != SpecReplicas(*rs)) {
            scale(rs, spec_of[Uid(*rs)]);
            progress_reason = "ReplicaSetUpdated";
          }
        }
      }
    }
  }

  // Old ReplicaSets beyond spec.revisionHistoryLimit that run nothing go.
  std::vector<ObjectPtr> idle;
  for (const auto& rs : old)
    if (SpecReplicas(*rs) == 0 && StatusInt(*rs, "replicas") == 0 && active_pods(rs) == 0) idle.push_back(rs);
  std::sort(idle.begin(), idle.end(),
            [](const ObjectPtr& a, const ObjectPtr& b) { return Revision(*a) < Revision(*b); });
  const long long keep = Int(spec, "revisionHistoryLimit", 10);
  for (long long i = 0; i + keep < static_cast<long long>(idle.size()); ++i)
    Delete("apps", "replicasets", *idle[static_cast<std::size_t>(i)]);

  // Status, as kubectl rollout status reads it.
  long long total = 0, ready = 0, available = 0;
  for (const auto& rs : sets) {
    total += StatusInt(*rs, "replicas");
    ready += StatusInt(*rs, "readyReplicas");
    available += StatusInt(*rs, "availableReplicas");
  }
  const long long updated = new_rs ? StatusInt(*new_rs, "replicas") : 0;
  const std::string rs_name = new_rs ? Name(*new_rs) : "";
  json next = status;
  next["observedGeneration"] = Metadata(d).value("generation", 1);
  next["replicas"] = total;
  next["updatedReplicas"] = updated;
  next["readyReplicas"] = ready;
  next["availableReplicas"] = available;
  if (replicas > available) next["unavailableReplicas"] = replicas - available;
  else next.erase("unavailableReplicas");
  if (available >= replicas - max_unavailable) {
    SetCondition(next, "Available", "True", "MinimumReplicasAvailable", "Deployment has minimum availability.", now,
                 true);
  } else {
    SetCondition(next, "Available", "False", "MinimumReplicasUnavailable",
                 "Deployment does not have minimum availability.", now, true);
  }
  const json progressing = Condition(status, "Progressing");
  const std::string reason = progressing.is_object() ? progressing.value("reason", "") : "";
  const bool complete = updated == replicas && total == replicas && available == replicas && new_rs;
  const bool moved = updated > StatusInt(d, "updatedReplicas") ||
                     total - updated < StatusInt(d, "replicas") - StatusInt(d, "updatedReplicas") ||
                     ready > StatusInt(d, "readyReplicas") || available > StatusInt(d, "availableReplicas") ||
                     Int(status, "observedGeneration", 0) < Metadata(d).value("generation", 1);
  if (paused) {
    if (reason != "DeploymentPaused")
      SetCondition(next, "Progressing", "Unknown", "DeploymentPaused", "Deployment is paused", now, true);
  } else if (complete) {
    if (reason != "NewReplicaSetAvailable")
      SetCondition(next, "Progressing", "True", "NewReplicaSetAvailable",
                   "ReplicaSet \"" + rs_name + "\" has successfully progressed.", now, true);
  } else if (progress_reason == "NewReplicaSetCreated") {
    SetCondition(next, "Progressing", "True", "NewReplicaSetCreated", "Created new replica set \"" + rs_name + "\"",
                 now, true);
  } else if (moved || !progressing.is_object() || !progress_reason.empty() || reason == "DeploymentPaused" ||
             reason == "NewReplicaSetAvailable") {
    SetCondition(next, "Progressing", "True", "ReplicaSetUpdated", "ReplicaSet \"" + rs_name + "\" is progressing.",
                 now, true);
  } else if (reason != "ProgressDeadlineExceeded") {
    // No progress since lastUpdateTime: past progressDeadlineSeconds the rollout has timed out.
    auto stalled = Since(progressing.value("lastUpdateTime", ""), cluster_.clock.Now());
    if (stalled && *stalled > std::chrono::seconds(Int(spec, "progressDeadlineSeconds", 600))) {
      SetCondition(next, "Progressing", "False", "ProgressDeadlineExceeded",
                   "ReplicaSet \"" + rs_name + "\" has timed out progressing.", now, true);
    }
  }
  // lastUpdateTime moves only with a change, so an unchanged status is no write.
  for (const char* type : {"Available", "Progressing"}) {
    json before = Condition(status, type), after = Condition(next, type);
    if (before.is_object() && after.is_object() && before.value("status", "") == after.value("status", "") &&
        before.value("reason", "") == after.value("reason", "") &&
        before.value("message", "") == after.value("message", "") && !(type == std::string("Progressing") && moved)) {
      SetCondition(next, type, before.value("status", ""), before.value("reason", ""), before.value("message", ""),
                   before.value("lastUpdateTime", now), true);
    }
  }
  const std::string revision = new_rs ? std::to_string(std::max(Revision(*new_rs), max_old_revision + 1)) : "";
  if (next == status &&
      (revision.empty() || Child(Metadata(d), "annotations").value(kRevisionAnnotation, "") == revision))
    return;  // nothing to write
  Change("deployments.apps", d, [&](json& object) {
    object["status"] = next;
    if (!revision.empty()) object["metadata"]["annotations"][kRevisionAnnotation] = revision;
  });
}

}  // namespace septa::kubesim
