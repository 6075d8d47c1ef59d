#include "services/kubesim/scheduler_crds.h"

#include "services/kubesim/patches.h"

namespace septa::kubesim {

Status InstallSchedulerCrds(ApiServer& api) {
  for (std::string_view manifest : SchedulerCrdManifests()) {
    auto parsed = ParseJsonOrYaml(manifest);
    if (!parsed.ok()) return Internal("scheduler CRD manifest: " + parsed.error().message);
    nlohmann::json crd = std::move(*parsed);
    const std::string name = crd.value("metadata", nlohmann::json::object()).value("name", "");
    // No field manager: a later apply of these CRDs (the real ones from the
    // KAI or Kueue charts, or a test's own) takes them over without conflicts.
    auto created = api.CreateObject("apiextensions.k8s.io", "customresourcedefinitions", std::move(crd), "");
    if (!created.ok()) {
      return Internal("scheduler CRD " + name + ": " + created.error().message);
    }
  }
  return Status::Ok();
}

}  // namespace septa::kubesim
