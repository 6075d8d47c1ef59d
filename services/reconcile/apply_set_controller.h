// The apply set controller (GitOps' drift, docs/gitops.md): keeps each
// set's out-of-sync gauge and, for a set whose policy is revert, writes
// back what was changed outside it. Keys are apply sets (tenant "" for
// the platform's). Triggers: NOTIFY septa_applyset_drift, which
// core::GuardSetMember sends with every write outside a set to a field it
// owns ("<tenant>/<name>/<surface>"), and the resync, which lists every set
// (at start, on a shard gained, after the listener reconnects).
//
// Reconcile(set), level-based:
//  - the set is gone: its gauge is removed;
//  - its policy is revert and a member drifted: ApplyService::Revert, one
//    transaction, all or nothing (a refusal or a crash leaves the drift,
//    and the retry or the next start's resync finds it again);
//  - septa_applyset_out_of_sync_objects{set} is set to its drifted members.
// DriftNoted counts septa_applyset_drift_total{set,surface} on the replica
// that holds the set's shard, so that each write is counted once.
#pragma once

#include <chrono>
#include <compare>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/clock.h"
#include "services/core/apply_service.h"
#include "services/core/store.h"
#include "services/reconcile/controller.h"

namespace septa::reconcile {

struct ApplySetKey {
  std::string tenant{};  // "" for a platform set
  std::string name{};
  auto operator<=>(const ApplySetKey&) const = default;
};

// "<tenant>/<name>" ("/prod" for the platform's "prod").
template <>
struct KeyCodec<ApplySetKey> {
  static std::string Encode(const ApplySetKey& key) { return key.tenant + "/" + key.name; }
  static std::optional<ApplySetKey> Decode(std::string_view text) {
    const std::size_t slash = text.find('/');
    if (slash == std::string_view::npos || slash + 1 == text.size() ||
        text.find('/', slash + 1) != std::string_view::npos) {
      return std::nullopt;
    }
    return ApplySetKey{std::string(text.substr(0, slash)), std::string(text.substr(slash + 1))};
  }
};

struct ApplySetControllerOptions {
  int workers = 1;
  ShardLeases* shards = nullptr;  // as ControllerOptions::shards
};

class ApplySetController final : public Reconciler<ApplySetKey> {
 public:
  ApplySetController(ApplySetControllerOptions options, core::ApplyService& apply, core::Store& store,
                     const Clock& clock, prometheus::Registry& metrics);
  ~ApplySetController() override;  // Stop

  void Start();
  void Stop();
  void Resync();
  // A NOTIFY payload, "<tenant>/<name>/<surface>": counted and reconciled.
  void DriftNoted(std::string_view payload);
  bool AwaitIdle(std::chrono::milliseconds timeout) const;

  Outcome Reconcile(const ApplySetKey& key) override;

 private:
  struct Instruments;
  Result<std::vector<ApplySetKey>> ListSets();

  core::ApplyService& apply_;
  core::Store& store_;
  std::unique_ptr<Instruments> instruments_;
  Controller<ApplySetKey> controller_;
};

}  // namespace septa::reconcile
