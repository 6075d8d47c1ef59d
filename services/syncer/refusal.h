// How a refused pod is told so inside its virtual cluster (SYNCER-FACTS:
// "refused with an Event on the virtual pod and a condition, never silently
// changed"): a Warning event with reason SyncRefused, created once per
// distinct message (its name derives from the pod's UID and the message, so
// retries write nothing), and the pod condition PodScheduled=False with
// reason SyncRefused. The pod stays Pending.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "common/status.h"
#include "common/time_point.h"
#include "services/syncer/virtual_cluster_watches.h"
#include "tenancy/sync/pod_translation.h"

namespace septa::syncer {

inline constexpr const char* kSyncRefusedReason = "SyncRefused";

// "<field>: <message>", what the event and the condition say.
std::string RefusalText(const tenancy::sync::Refusal& refusal);

// The Event to create in the virtual object's namespace (a pod, or the
// object of `kind`: "Service", "Endpoints").
nlohmann::json RefusalEvent(const nlohmann::json& virtual_object, const tenancy::sync::Refusal& refusal,
                            std::string_view kind = "Pod");

// A virtual object other than a pod refused (of `kind`: "Service",
// "Endpoints", "PersistentVolumeClaim"): its RefusalEvent created in
// `cluster` (one there already counts) and logged when new. Such objects
// have no condition to set.
Status RefuseObject(WatchedCluster& cluster, const nlohmann::json& virtual_object, const std::string& kind,
                    const tenancy::sync::Refusal& refusal);

// The virtual pod's status with the condition set; nullopt when it says so already.
std::optional<nlohmann::json> RefusedStatus(const nlohmann::json& virtual_pod, const tenancy::sync::Refusal& refusal,
                                            TimePoint now);

}  // namespace septa::syncer
