#include "services/kubesim/pod_exits.h"

#include "services/kubesim/objects.h"
#include "services/kubesim/workload_defaults.h"
#include "services/kubesim/workload_util.h"

namespace septa::kubesim {

using nlohmann::json;
using namespace std::chrono_literals;

void PodExits::Tick() {
  const TimePoint now = cluster_.clock.Now();
  const std::string ts = FormatRfc3339(now);
  std::map<std::string, TimePoint> seen;
  for (const auto& pod : pods_.Exiting()) {
    const json& md = (*pod)["metadata"];
    const std::string uid = md.value("uid", "");
    auto it = running_since_.find(uid);
    TimePoint since = it == running_since_.end() ? now : it->second;
    seen[uid] = since;
    const json annotations = md.value("annotations", json::object());
    // Validated when the pod was created (workload_defaults.cc).
    const auto run_for =
        std::chrono::milliseconds(AnnotationInteger(annotations, kRunForAnnotation, INT64_MAX, nullptr).value_or(0));
    const long long code = AnnotationInteger(annotations, kExitCodeAnnotation, 255, nullptr).value_or(0);
    const bool restarted = (*pod)["status"].value("containerStatuses", json::array()).size() > 0 &&
                           (*pod)["status"]["containerStatuses"][0].value("restartCount", 0) > 0;
    if (now - since < (restarted ? std::max<std::chrono::milliseconds>(run_for, 1s) : run_for)) continue;
    const std::string policy = pod->value("spec", json::object()).value("restartPolicy", "Always");
    const bool restart = policy == "Always" || (policy == "OnFailure" && code != 0);
    if (restart) seen[uid] = now;
    else seen.erase(uid);
    const std::string started = FormatRfc3339(since);
    (void)cluster_.storage.Mutate("pods", md.value("namespace", ""), md.value("name", ""),
                                  [&](const json* cur) -> ApiResult<Mutation> {
                                    if (!cur || (*cur)["metadata"].value("uid", "") != uid ||
                                        cur->value("status", json::object()).value("phase", "") != "Running")
                                      return Mutation{};
                                    json next = *cur;
                                    json& status = next["status"];
                                    const json terminated = {{"exitCode", code},
                                                             {"reason", code == 0 ? "Completed" : "Error"},
                                                             {"startedAt", started},
                                                             {"finishedAt", ts}};
                                    for (auto& c : status["containerStatuses"]) {
                                      if (restart) {
                                        c["restartCount"] = c.value("restartCount", 0) + 1;
                                        c["lastState"] = {{"terminated", terminated}};
                                        c["state"] = {{"running", {{"startedAt", ts}}}};
                                      } else {
                                        c["state"] = {{"terminated", terminated}};
                                        c["ready"] = false;
                                        c["started"] = false;
                                      }
                                    }
                                    if (!restart) {
                                      status["phase"] = code == 0 ? "Succeeded" : "Failed";
                                      for (auto& c : status["conditions"]) {
                                        const std::string type = c.value("type", "");
                                        if (type == "Ready" || type == "ContainersReady") {
                                          c["status"] = "False";
                                          c["reason"] = "PodCompleted";
                                          c["lastTransitionTime"] = ts;
                                        }
                                      }
                                    }
                                    return Mutation{Mutation::Kind::kPut, std::move(next)};
                                  });
  }
  running_since_ = std::move(seen);
}

}  // namespace septa::kubesim
