// --wait: septactl's one poll loop over virtual clusters. The vcluster
// commands wait for the one they changed, `apply --wait` for every virtual
// cluster of its plan; both read GetVirtualCluster every kPollInterval,
// each read a call of its own with its own deadline (the global
// --timeout), until each has reached its goal, one can no longer reach it,
// or the wait's own --timeout passes.
#pragma once

#include <grpcpp/support/status.h>

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "common/clock.h"
#include "septa/v1/vcluster.pb.h"
#include "services/cli/septa_client.h"

namespace septa::cli {

inline constexpr std::chrono::milliseconds kPollInterval{250};

// What a wait waits for on one virtual cluster.
enum class WaitGoal {
  kSettled,   // the state left PROVISIONING (vcluster create, update, wake)
  kDeleting,  // DELETING, or gone (vcluster delete)
  kAsleep,    // Sleeping True for the current generation, or no longer SLEEPING (vcluster sleep)
  // READY, or SLEEPING (asleep by someone's choice: an apply does not wake
  // it); FAILED, DELETING or gone can no longer become READY (apply: what
  // it created or updated, or declared unchanged)
  kReady,
  kGone,  // gone: GetVirtualCluster answers NOT_FOUND (apply: what it deleted)
};

// One virtual cluster waited for, and what the last read of it answered.
struct WaitTarget {
  std::string tenant{};
  std::string name{};
  WaitGoal goal = WaitGoal::kSettled;
  std::optional<v1::VirtualCluster> seen{};  // the last answer; nullopt: not read yet (or gone)
  bool gone = false;                         // the last read answered NOT_FOUND
};

enum class TargetState { kWaiting, kReached, kFailed };
TargetState StateOf(const WaitTarget& target);

// One read of a virtual cluster; ReaderOf's is GetVirtualCluster.
using ReadVirtualCluster =
    std::function<grpc::Status(const std::string& tenant, const std::string& name, v1::VirtualCluster* out)>;
ReadVirtualCluster ReaderOf(SeptaClient& client);

enum class WaitEnd {
  kReached,     // every target reached its goal
  kFailed,      // some target can no longer reach it (kReady only): the wait ends at once
  kTimedOut,    // the timeout passed first
  kReadFailed,  // a read failed (NOT_FOUND too, unless the goal takes it): see status
};
struct WaitOutcome {
  WaitEnd end = WaitEnd::kReached;
  grpc::Status status{};  // kReadFailed: the read's
};

// Reads each target not read yet at once, then, every kPollInterval, each
// target still waiting, until the wait ends; `progress` runs after the
// first round and after each later one (targets hold what was read).
WaitOutcome WaitFor(std::vector<WaitTarget>& targets, std::chrono::milliseconds timeout, const Clock& clock,
                    const ReadVirtualCluster& read, const std::function<void()>& progress);

// "1s", "1500ms".
std::string FormatWaitTimeout(std::chrono::milliseconds timeout);

}  // namespace septa::cli
