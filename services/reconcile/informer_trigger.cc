#include "services/reconcile/informer_trigger.h"

#include <utility>

namespace septa::reconcile {

std::optional<std::string> ObjectKey(const nlohmann::json& object) {
  auto text = [&](const char* field) {
    const nlohmann::json* metadata = object.is_object() && object.contains("metadata") ? &object["metadata"] : nullptr;
    if (!metadata || !metadata->is_object() || !metadata->contains(field)) return std::string();
    const nlohmann::json& value = (*metadata)[field];
    return value.is_string() ? value.get<std::string>() : std::string();
  };
  const std::string name = text("name"), ns = text("namespace");
  if (name.empty()) return std::nullopt;  // an object without a name has no key
  return ns.empty() ? name : ns + "/" + name;
}

InformedController::InformedController(ControllerOptions<std::string> options, Reconciler<std::string>& reconciler,
                                       const Clock& clock, prometheus::Registry& metrics, kube::Client& host,
                                       const kube::Resource& resource, std::chrono::milliseconds informer_resync)
    : resource_name_(resource.resource),
      controller_(std::move(options), reconciler, clock, metrics),
      informer_(host, resource, "", {}, EnqueueOnChange(controller_), informer_resync) {}

Status InformedController::Start(std::chrono::milliseconds timeout) {
  informer_.Start();
  if (!informer_.WaitForSync(timeout)) {
    return DeadlineExceeded("the host cluster's " + resource_name_ + " could not be listed within " +
                            std::to_string(timeout.count()) + " ms");
  }
  controller_.Start();
  return Status::Ok();
}

void InformedController::Stop() {
  informer_.Stop();
  controller_.Stop();
}

}  // namespace septa::reconcile
