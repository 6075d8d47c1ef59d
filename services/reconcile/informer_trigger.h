// Kubernetes informer events as controller triggers: each add, update
// (including the informer's periodic resync) and delete enqueues the key of
// the object: `key_of`'s (nullopt: none), by default "<namespace>/<name>"
// (or "<name>" for a cluster-scoped one) for a controller of string keys.
// The reconciler then reads the object's current state itself: the event's
// content is not passed on (level-based).
//
//   kube::Informer nodes(client, kNodes, "", {}, EnqueueOnChange(controller));
//
// InformedController bundles a controller with the one informer that
// triggers it (the inventory and MIG layout controllers, on the host's nodes).
#pragma once

#include <chrono>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "services/kube/watch.h"
#include "services/reconcile/controller.h"

namespace septa::reconcile {

// "<namespace>/<name>", or "<name>" when the object has no namespace;
// nullopt for an object without a name.
std::optional<std::string> ObjectKey(const nlohmann::json& object);

template <ControllerKey Key>
kube::InformerHandlers EnqueueOnChange(Controller<Key>& controller,
                                       std::function<std::optional<Key>(const nlohmann::json&)> key_of) {
  auto enqueue = [&controller, key_of = std::move(key_of)](const nlohmann::json& object) {
    if (std::optional<Key> key = key_of(object)) controller.Enqueue(*key);
  };
  return {.on_add = enqueue,
          .on_update = [enqueue](const nlohmann::json&, const nlohmann::json& object) { enqueue(object); },
          .on_delete = enqueue};
}
inline kube::InformerHandlers EnqueueOnChange(Controller<std::string>& controller) {
  return EnqueueOnChange<std::string>(controller, ObjectKey);
}

// A controller and the informer on all of `resource` (every namespace) that
// enqueues its objects' keys (ObjectKey: node names for the host's nodes).
class InformedController {
 public:
  InformedController(ControllerOptions<std::string> options, Reconciler<std::string>& reconciler, const Clock& clock,
                     prometheus::Registry& metrics, kube::Client& host, const kube::Resource& resource,
                     std::chrono::milliseconds informer_resync);

  // Starts the informer, waits (at most `timeout`) for its first list, so
  // that the controller's first pass sees the host's objects, then starts the
  // controller. kDeadlineExceeded when the objects could not be listed in time.
  Status Start(std::chrono::milliseconds timeout);
  // The informer first: no event enqueues into a stopped controller.
  void Stop();

  Controller<std::string>& controller() { return controller_; }
  const Controller<std::string>& controller() const { return controller_; }
  const kube::Informer& informer() const { return informer_; }

 private:
  const std::string resource_name_;
  Controller<std::string> controller_;
  kube::Informer informer_;
};

}  // namespace septa::reconcile
