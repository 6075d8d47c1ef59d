// The /scale subresource (autoscaling/v1 Scale) of Deployments, ReplicaSets
// and StatefulSets: what `kubectl scale` reads and patches.
#pragma once

#include <nlohmann/json.hpp>

#include "services/kubesim/resources.h"

namespace septa::kubesim {

bool ServesScale(const ResourceType& type);

// The Scale view of a scalable object.
nlohmann::json ScaleOf(const nlohmann::json& object);

}  // namespace septa::kubesim
