// Internal to the workload controllers: reading pods and owners, conditions,
// template hashes and int-or-percent values.
#pragma once

#include <chrono>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "common/time_point.h"

namespace septa::kubesim::workload {

// A member of an object, read in place: an empty object when absent (the
// controllers' passes read every pod; copying each into value() was their
// main cost).
const nlohmann::json& Child(const nlohmann::json& object, const char* key);
const nlohmann::json& Metadata(const nlohmann::json& object);
std::string Name(const nlohmann::json& object);
std::string Uid(const nlohmann::json& object);
// The uid in the object's ownerReference with controller: true ("" when none).
std::string ControllerUid(const nlohmann::json& object);
// An ownerReference with controller: true to `owner`.
nlohmann::json ControllerReference(const nlohmann::json& owner);

std::string Phase(const nlohmann::json& pod);
bool Terminal(const nlohmann::json& pod);  // Succeeded or Failed
bool Deleting(const nlohmann::json& object);
// Neither terminal nor being deleted: counts toward a controller's replicas.
bool Active(const nlohmann::json& pod);
// Running with the Ready condition True.
bool Ready(const nlohmann::json& pod);
// Ready for at least `min_ready_seconds` at `now`.
bool Available(const nlohmann::json& pod, long long min_ready_seconds, TimePoint now);

long long Int(const nlohmann::json& object, const char* key, long long fallback);
// How long before `now` an RFC 3339 timestamp was; nullopt when it is not one.
std::optional<std::chrono::system_clock::duration> Since(const std::string& timestamp, TimePoint now);
// An int-or-percent field (maxSurge, maxUnavailable) of `total`.
long long ScaledValue(const nlohmann::json& value, long long total, bool round_up);

// A short hash of a pod template, spelt as Kubernetes spells
// pod-template-hash and controller-revision-hash values.
std::string TemplateHash(const nlohmann::json& pod_template);

// Sets condition `type` in `status.conditions`: lastTransitionTime changes
// only with the status, lastUpdateTime (when `with_update_time`) always.
void SetCondition(nlohmann::json& status, const std::string& type, const std::string& value, const std::string& reason,
                  const std::string& message, const std::string& now, bool with_update_time);
// The condition of `type` in status (null when absent).
nlohmann::json Condition(const nlohmann::json& status, const std::string& type);

}  // namespace septa::kubesim::workload
