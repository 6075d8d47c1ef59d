#include "services/reconcile/apply_set_controller.h"

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/registry.h>
#include <spdlog/spdlog.h>

#include <map>
#include <mutex>

namespace septa::reconcile {

struct ApplySetController::Instruments {
  explicit Instruments(prometheus::Registry& registry)
      : out_of_sync(prometheus::BuildGauge()
                        .Name("septa_applyset_out_of_sync_objects")
                        .Help("Members of an apply set changed outside it since its last apply")
                        .Register(registry)),
        drift(prometheus::BuildCounter()
                  .Name("septa_applyset_drift_total")
                  .Help("Writes outside an apply set to fields it owns, by the surface they came through")
                  .Register(registry)) {}

  void SetOutOfSync(const std::string& set, double members) {
    std::lock_guard lock(mu);
    auto [it, added] = gauges.try_emplace(set, nullptr);
    if (added) it->second = &out_of_sync.Add({{"set", set}});
    it->second->Set(members);
  }
  void Forget(const std::string& set) {
    std::lock_guard lock(mu);
    if (const auto it = gauges.find(set); it != gauges.end()) {
      out_of_sync.Remove(it->second);
      gauges.erase(it);
    }
  }

  prometheus::Family<prometheus::Gauge>& out_of_sync;
  prometheus::Family<prometheus::Counter>& drift;
  std::mutex mu;
  std::map<std::string, prometheus::Gauge*> gauges;  // by set resource
};

ApplySetController::ApplySetController(ApplySetControllerOptions options, core::ApplyService& apply, core::Store& store,
                                       const Clock& clock, prometheus::Registry& metrics)
    : apply_(apply),
      store_(store),
      instruments_(std::make_unique<Instruments>(metrics)),
      controller_({.name = "apply-sets",
                   .workers = options.workers,
                   .list_keys = [this] { return ListSets(); },
                   .shards = options.shards},
                  *this, clock, metrics) {}

ApplySetController::~ApplySetController() { Stop(); }

void ApplySetController::Start() { controller_.Start(); }
void ApplySetController::Stop() { controller_.Stop(); }
void ApplySetController::Resync() { controller_.Resync(); }
bool ApplySetController::AwaitIdle(std::chrono::milliseconds timeout) const { return controller_.AwaitIdle(timeout); }

void ApplySetController::DriftNoted(std::string_view payload) {
  const std::size_t last = payload.rfind('/');
  const std::optional<ApplySetKey> key =
      last == std::string_view::npos ? std::nullopt : DecodeKey<ApplySetKey>(payload.substr(0, last));
  if (!key) {
    spdlog::warn("apply-sets: a drift notification that names no set: \"{}\"", payload);
    Resync();
    return;
  }
  if (!controller_.Owns(*key)) return;  // the replica holding its shard counts it
  instruments_->drift
      .Add(
          {{"set", core::ApplySetResource(key->tenant, key->name)}, {"surface", std::string(payload.substr(last + 1))}})
      .Increment();
  controller_.Enqueue(*key);
}

Result<std::vector<ApplySetKey>> ApplySetController::ListSets() {
  SEPTA_ASSIGN_OR_RETURN(
      const std::vector<core::ApplySet> sets,
      core::TransactFor(store_, core::TxMode::kReadOnly, [](core::Tx& tx) { return tx.ApplySets().ListAll(); }));
  std::vector<ApplySetKey> keys;
  keys.reserve(sets.size());
  for (const core::ApplySet& s : sets) keys.push_back({s.tenant, s.name});
  return keys;
}

Outcome ApplySetController::Reconcile(const ApplySetKey& key) {
  const std::string resource = core::ApplySetResource(key.tenant, key.name);
  auto view = apply_.Inspect(key.tenant, key.name);
  if (IsNotFound(view.status())) {
    instruments_->Forget(resource);
    return Outcome::Done();
  }
  if (!view.ok()) return Outcome::Error(view.status());
  if (view->set.on_drift == core::DriftPolicy::kRevert && !view->drifted.empty()) {
    auto reverted = apply_.Revert(key.tenant, key.name);
    if (!reverted.ok()) {
      instruments_->SetOutOfSync(resource, static_cast<double>(view->drifted.size()));
      return Outcome::Error(reverted.status());
    }
    spdlog::info("apply-sets: {} reverted {} drifted member(s) to its revision {}", resource, view->drifted.size(),
                 reverted->revision);
    view = apply_.Inspect(key.tenant, key.name);
    if (!view.ok()) return Outcome::Error(view.status());
  }
  instruments_->SetOutOfSync(resource, static_cast<double>(view->drifted.size()));
  return Outcome::Done();
}

}  // namespace septa::reconcile
