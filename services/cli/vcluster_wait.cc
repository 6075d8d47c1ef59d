#include "services/cli/vcluster_wait.h"

#include <algorithm>

#include "tenancy/condition.h"

namespace septa::cli {

namespace {

using v1::VirtualCluster;

// Whether NOT_FOUND answers the wait (else it is a failed read).
bool TakesGone(WaitGoal goal) {
  return goal == WaitGoal::kDeleting || goal == WaitGoal::kGone || goal == WaitGoal::kReady;
}

bool Asleep(const VirtualCluster& vc) {
  if (vc.state() != VirtualCluster::SLEEPING) return true;  // woken meanwhile: nothing to wait for
  for (const auto& c : vc.conditions()) {
    if (c.type() == tenancy::kSleeping) return c.status() == "True" && c.observed_generation() == vc.generation();
  }
  return false;
}

}  // namespace

TargetState StateOf(const WaitTarget& target) {
  if (target.gone) {
    if (target.goal == WaitGoal::kReady) return TargetState::kFailed;
    return TakesGone(target.goal) ? TargetState::kReached : TargetState::kWaiting;
  }
  if (!target.seen) return TargetState::kWaiting;
  const VirtualCluster& vc = *target.seen;
  const auto reached = [](bool yes) { return yes ? TargetState::kReached : TargetState::kWaiting; };
  switch (target.goal) {
    case WaitGoal::kSettled: return reached(vc.state() != VirtualCluster::PROVISIONING);
    case WaitGoal::kDeleting: return reached(vc.state() == VirtualCluster::DELETING);
    case WaitGoal::kAsleep: return reached(Asleep(vc));
    case WaitGoal::kReady:
      switch (vc.state()) {
        case VirtualCluster::READY:
        case VirtualCluster::SLEEPING: return TargetState::kReached;
        case VirtualCluster::FAILED:
        case VirtualCluster::DELETING: return TargetState::kFailed;
        default: return TargetState::kWaiting;
      }
    case WaitGoal::kGone: return TargetState::kWaiting;
  }
  return TargetState::kWaiting;
}

ReadVirtualCluster ReaderOf(SeptaClient& client) {
  return [&client](const std::string& tenant, const std::string& name, v1::VirtualCluster* out) {
    v1::GetVirtualClusterRequest request;
    request.set_tenant(tenant);
    request.set_name(name);
    // Call gives each read a context, and a deadline, of its own.
    return client.Call(client.vclusters(), &v1::VirtualClusterService::Stub::GetVirtualCluster, request, out);
  };
}

WaitOutcome WaitFor(std::vector<WaitTarget>& targets, std::chrono::milliseconds timeout, const Clock& clock,
                    const ReadVirtualCluster& read, const std::function<void()>& progress) {
  const TimePoint deadline = clock.Now() + timeout;
  const auto read_one = [&read](WaitTarget& target) {
    VirtualCluster current;
    const grpc::Status status = read(target.tenant, target.name, &current);
    if (status.error_code() == grpc::StatusCode::NOT_FOUND && TakesGone(target.goal)) {
      target.gone = true;
      target.seen.reset();
      return grpc::Status::OK;
    }
    if (!status.ok()) return status;
    target.gone = false;
    target.seen = std::move(current);
    return grpc::Status::OK;
  };
  // unread_only: the first round, for the targets not read yet; then every target still waiting.
  const auto round = [&](bool unread_only) {
    for (WaitTarget& target : targets) {
      const bool due = unread_only ? !target.seen && !target.gone : StateOf(target) == TargetState::kWaiting;
      if (!due) continue;
      if (grpc::Status status = read_one(target); !status.ok()) return status;
    }
    return grpc::Status::OK;
  };

  if (grpc::Status status = round(true); !status.ok()) return {.end = WaitEnd::kReadFailed, .status = status};
  progress();
  while (true) {
    bool waiting = false;
    for (const WaitTarget& target : targets) {
      const TargetState state = StateOf(target);
      if (state == TargetState::kFailed) return {.end = WaitEnd::kFailed, .status = grpc::Status::OK};
      waiting = waiting || state == TargetState::kWaiting;
    }
    if (!waiting) return {.end = WaitEnd::kReached, .status = grpc::Status::OK};
    if (clock.Now() >= deadline) return {.end = WaitEnd::kTimedOut, .status = grpc::Status::OK};
    clock.SleepUntil(std::min(deadline, clock.Now() + kPollInterval), {});
    if (grpc::Status status = round(false); !status.ok()) return {.end = WaitEnd::kReadFailed, .status = status};
    progress();
  }
}

std::string FormatWaitTimeout(std::chrono::milliseconds timeout) {
  return timeout.count() % 1000 == 0 ? std::to_string(timeout.count() / 1000) + "s"
                                     : std::to_string(timeout.count()) + "ms";
}

}  // namespace septa::cli
