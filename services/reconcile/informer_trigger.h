// Kubernetes informer events as controller triggers: each add, update
// (including the informer's periodic resync) and delete enqueues the key of
// the object, "<namespace>/<name>" (or "<name>" for a cluster-scoped one)
// unless `key_of` says otherwise. The reconciler then reads the object's
// current state itself: the event's content is not passed on (level-based).
//
//   kube::Informer nodes(client, kNodes, "", {}, EnqueueOnChange(controller));
//
// InformedController bundles a controller with the one informer that
// triggers it (the inventory and MIG layout controllers, on the host's nodes).
#pragma once

#include <chrono>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>

#include "services/kube/watch.h"
#include "services/reconcile/controller.h"

namespace septa::reconcile {

// "<namespace>/<name>", or "<name>" when the object has no namespace.
std::string ObjectKey(const nlohmann::json& object);

kube::InformerHandlers EnqueueOnChange(Controller& controller,
                                       std::function<std::string(const nlohmann::json&)> key_of = ObjectKey);

// A controller and the informer on all of `resource` (every namespace) that
// enqueues its objects' keys.
class InformedController {
 public:
  InformedController(ControllerOptions options, Reconciler& reconciler, const Clock& clock,
                     prometheus::Registry& metrics, kube::Client& host, const kube::Resource& resource,
                     std::chrono::milliseconds informer_resync);

  // Starts the informer, waits (at most `timeout`) for its first list, so
  // that the controller's first pass sees the host's objects, then starts the
  // controller. kDeadlineExceeded when the objects could not be listed in time.
  Status Start(std::chrono::milliseconds timeout);
  // The informer first: no event enqueues into a stopped controller.
  void Stop();

  Controller& controller() { return controller_; }
  const Controller& controller() const { return controller_; }
  const kube::Informer& informer() const { return informer_; }

 private:
  const std::string resource_name_;
  Controller controller_;
  kube::Informer informer_;
};

}  // namespace septa::reconcile
