#include "tenancy/lifecycle.h"

#include <algorithm>
#include <array>
#include <string_view>

#include "common/text.h"

namespace septa::tenancy {

namespace {

using State = VirtualClusterState;

constexpr std::string_view kUpdatable = "display_name, capacity, quota, queue, api_limits (admins only)";
constexpr std::array<std::string_view, 2> kImmutable = {"name", "tenant"};
constexpr std::array<std::string_view, 9> kOutputOnly = {"state",          "conditions",  "reservation",
                                                         "host_namespace", "endpoint",    "etag",
                                                         "generation",     "create_time", "update_time"};

template <typename Names>
bool Contains(const Names& names, std::string_view name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

// Copies the field or member that `path` names; false when it names none
// that a client may update.
bool CopyPath(VirtualCluster& to, const VirtualCluster& from, std::string_view path) {
  if (path == "display_name") {
    to.display_name = from.display_name;
  } else if (path == "capacity") {
    to.capacity = from.capacity;
  } else if (path == "quota") {
    to.quota = from.quota;
  } else if (path == "quota.cpu_milli") {
    to.quota.cpu_milli = from.quota.cpu_milli;
  } else if (path == "quota.memory_mib") {
    to.quota.memory_mib = from.quota.memory_mib;
  } else if (path == "quota.pods") {
    to.quota.pods = from.quota.pods;
  } else if (path == "queue") {
    to.queue = from.queue;
  } else if (path == "queue.priority") {
    to.queue.priority = from.queue.priority;
  } else if (path == "queue.over_quota_weight") {
    to.queue.over_quota_weight = from.queue.over_quota_weight;
  } else if (path == "api_limits") {
    to.api_limits = from.api_limits;
  } else if (path == "api_limits.objects") {
    to.api_limits.objects = from.api_limits.objects;
  } else if (path == "api_limits.object_bytes") {
    to.api_limits.object_bytes = from.api_limits.object_bytes;
  } else if (path == "api_limits.watches") {
    to.api_limits.watches = from.api_limits.watches;
  } else if (path == "api_limits.requests_in_flight") {
    to.api_limits.requests_in_flight = from.api_limits.requests_in_flight;
  } else {
    return false;
  }
  return true;
}

Status ApplyPath(VirtualCluster& to, const VirtualCluster& from, const std::string& path) {
  const std::string_view field = std::string_view(path).substr(0, path.find('.'));
  if (Contains(kImmutable, field)) return InvalidField(std::string(field), "is immutable");
  if (Contains(kOutputOnly, field)) return InvalidField(std::string(field), "is output only; it cannot be updated");
  if (CopyPath(to, from, path)) return Status::Ok();
  if (field == "capacity") {
    return InvalidField(EscapeControlCharacters(path),
                        "capacity is replaced whole: name \"capacity\" in the update mask");
  }
  return InvalidField("update_mask", "unknown field \"" + EscapeControlCharacters(path) + "\"; updatable fields are " +
                                         std::string(kUpdatable));
}

}  // namespace

bool CanTransition(State from, State to) {
  if (from == to) return true;
  switch (from) {
    case State::kProvisioning: return to == State::kReady || to == State::kFailed || to == State::kDeleting;
    case State::kReady:
    case State::kSleeping: return true;  // to any other state
    case State::kFailed: return to == State::kProvisioning || to == State::kReady || to == State::kDeleting;
    case State::kDeleting: return false;
  }
  return false;
}

Status CheckTransition(State from, State to) {
  if (CanTransition(from, to)) return Status::Ok();
  return FieldError(Code::kFailedPrecondition, "state",
                    "a " + std::string(VirtualClusterStateName(from)) + " virtual cluster cannot become " +
                        std::string(VirtualClusterStateName(to)));
}

Status CheckUpdatable(State state) {
  if (state != State::kDeleting) return Status::Ok();
  return FieldError(Code::kFailedPrecondition, "state",
                    "the virtual cluster is DELETING; its capacity, quota, queue and display name can no longer "
                    "change");
}

Result<VirtualCluster> ApplyVirtualClusterPatch(const VirtualCluster& current, const VirtualCluster& patch,
                                                const std::vector<std::string>& paths) {
  if (paths.empty()) {
    return InvalidField("update_mask", "must name at least one field; updatable fields are " + std::string(kUpdatable));
  }
  VirtualCluster updated = current;
  for (const std::string& path : paths) SEPTA_RETURN_IF_ERROR(ApplyPath(updated, patch, path));
  SEPTA_RETURN_IF_ERROR(CheckUpdatable(current.state));
  if (updated.capacity != current.capacity || updated.quota != current.quota || updated.queue != current.queue ||
      updated.api_limits != current.api_limits) {
    ++updated.generation;
  }
  return updated;
}

Result<VirtualCluster> RequestSleep(const VirtualCluster& current) {
  if (current.state == State::kSleeping) return current;
  if (current.state != State::kReady) {
    return FieldError(Code::kFailedPrecondition, "state",
                      "the virtual cluster is " + std::string(VirtualClusterStateName(current.state)) +
                          "; only a READY virtual cluster can sleep");
  }
  VirtualCluster next = current;
  next.state = State::kSleeping;
  ++next.generation;
  return next;
}

Result<VirtualCluster> RequestWake(const VirtualCluster& current) {
  if (current.state == State::kReady || current.state == State::kProvisioning) return current;
  if (current.state != State::kSleeping) {
    return FieldError(Code::kFailedPrecondition, "state",
                      "the virtual cluster is " + std::string(VirtualClusterStateName(current.state)) +
                          "; only a SLEEPING virtual cluster can wake");
  }
  VirtualCluster next = current;
  next.state = State::kProvisioning;
  ++next.generation;
  return next;
}

}  // namespace septa::tenancy
