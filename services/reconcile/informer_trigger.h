// Kubernetes informer events as controller triggers: each add, update
// (including the informer's periodic resync) and delete enqueues the key of
// the object, "<namespace>/<name>" (or "<name>" for a cluster-scoped one)
// unless `key_of` says otherwise. The reconciler then reads the object's
// current state itself: the event's content is not passed on (level-based).
//
//   kube::Informer nodes(client, kNodes, "", {}, EnqueueOnChange(controller));
#pragma once

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

}  // namespace septa::reconcile
