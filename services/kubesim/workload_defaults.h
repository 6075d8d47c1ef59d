// What the API server defaults and checks on workload objects before it
// stores them (Deployment, ReplicaSet, StatefulSet, Job, and the simulator's
// pod annotations), so that the workload controllers and kubectl read the
// fields a real cluster would have filled in.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "services/kubesim/api_error.h"
#include "services/kubesim/resources.h"

namespace septa::kubesim {

// Simulated containers run until told otherwise: a pod annotated with
// kRunForAnnotation (milliseconds, a non-negative integer) has its containers
// exit that long after it started, with the code in kExitCodeAnnotation
// (default 0; one of the two annotations is enough). See pod_exits.h.
inline constexpr const char* kRunForAnnotation = "kubesim.septa.dev/run-for-ms";
inline constexpr const char* kExitCodeAnnotation = "kubesim.septa.dev/exit-code";

// Fills in the defaults of a workload `object` of `type`, or of a Service
// (service_ips.h; a no-op for other kinds), and returns the field causes of
// what is wrong with it (empty when valid). Needs metadata.uid set (a Job's generated selector uses it).
std::vector<StatusCause> DefaultAndValidateWorkload(const ResourceType& type, nlohmann::json& object);

// The value of a simulator annotation, nullopt when absent (or, with `error`
// set, when it is not an integer in [0, max]).
std::optional<long long> AnnotationInteger(const nlohmann::json& annotations, const char* key, long long max,
                                           std::string* error);

}  // namespace septa::kubesim
