// A controller: a Reconciler, a WorkQueue of keys and N worker threads that
// take keys from the queue and reconcile them, one worker per key at a time.
// What Reconcile returns decides what happens next:
//   Done()            the key converged: its backoff is forgotten;
//   RequeueAfter(d)   look again after d of the injected clock (polling an
//                     external state that sends no events);
//   Error(status)     try again after the key's exponential backoff.
// A reconciler that throws is counted as an error, with backoff; the worker
// lives on.
//
// Controller<Key>, Reconciler<Key> and ControllerOptions<Key> are templates
// over the key type (reconcile/key.h: a regular value with one codec), as
// controller-runtime's Controller[request]: a reconciler is handed its key
// typed, never a string to parse.
//
// Triggers call Enqueue(key): a NOTIFY's payload (store::NotificationListener,
// decoded first), an informer's events (InformerTrigger), another controller.
// Resync() lists every key (ControllerOptions::list_keys) and enqueues those
// this replica acts on, at low priority (behind the keys events ask for):
// after a trigger may have been lost (a reconnect), at Start, and when
// ShardLeases gains a shard. The resync is an item of the queue like a key
// (deduplicated and retried with backoff alike), but no key can stand for it.
//
// Metrics (families shared by every controller of a registry, label
// controller="<name>"): septa_reconcile_queue_depth (keys ready),
// septa_reconcile_duration_seconds (per Reconcile call, by the injected
// clock), septa_reconcile_total{result=success|requeue|error},
// septa_reconcile_errors_total (errors and exceptions).
#pragma once

#include <algorithm>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "common/clock.h"
#include "common/status.h"
#include "services/reconcile/key.h"
#include "services/reconcile/shard.h"
#include "services/reconcile/shard_leases.h"
#include "services/reconcile/work_queue.h"

namespace prometheus {
class Registry;
}  // namespace prometheus

namespace septa::reconcile {

// What one Reconcile call asks of the runtime.
class Outcome {
 public:
  enum class Kind { kDone, kRequeueAfter, kError };

  static Outcome Done() { return Outcome(Kind::kDone, {}, Status::Ok()); }
  static Outcome RequeueAfter(std::chrono::nanoseconds delay) { return Outcome(Kind::kRequeueAfter, delay, {}); }
  static Outcome Error(Status status) { return Outcome(Kind::kError, {}, std::move(status)); }
  // Done when `status` is OK, its error otherwise.
  static Outcome Of(Status status) { return status.ok() ? Done() : Error(std::move(status)); }

  Kind kind() const { return kind_; }
  std::chrono::nanoseconds delay() const { return delay_; }
  const Status& status() const { return status_; }

 private:
  Outcome(Kind kind, std::chrono::nanoseconds delay, Status status)
      : kind_(kind), delay_(delay), status_(std::move(status)) {}
  Kind kind_;
  std::chrono::nanoseconds delay_;
  Status status_;
};

template <class Key>
class Reconciler {
 public:
  virtual ~Reconciler() = default;
  // Level-based and idempotent: reads the desired and the observed state of
  // the object named `key` and makes them agree, whatever happened before.
  virtual Outcome Reconcile(const Key& key) = 0;
};

template <class Key>
struct ControllerOptions {
  std::string name{};  // the metrics' controller label, the logs' prefix
  int workers = 1;
  WorkQueueOptions queue{};  // on_depth is the controller's
  // Every key the controller is responsible for, on all shards. Unset: Resync does nothing.
  std::function<Result<std::vector<Key>>()> list_keys{};
  // With several replicas: act only on keys of the shards held (the rest are
  // dropped, their holder acts on them); the controller resyncs on every
  // shard gained. Controllers may share one ShardLeases (the syncer acts on
  // the provisioner's shards). nullptr: act on every key.
  ShardLeases* shards = nullptr;
  // The text of a key that is sharded (ShardOf hashes it); unset: the key's
  // encoding. The syncer's keys shard on their virtual cluster's
  // "<tenant>/<vcluster>", so they follow the provisioner's shard of it.
  std::function<std::string(const Key&)> shard_key{};
};

namespace internal {

// The parts of a controller that do not depend on its key type (controller.cc).
class ControllerMetrics {
 public:
  ControllerMetrics(prometheus::Registry& registry, const std::string& name);
  ~ControllerMetrics();
  ControllerMetrics(const ControllerMetrics&) = delete;
  ControllerMetrics& operator=(const ControllerMetrics&) = delete;
  void SetDepth(std::size_t ready);
  void Observe(TimePoint::duration took);
  void Success();
  void Requeue();
  void Error();

 private:
  struct Instruments;
  std::unique_ptr<Instruments> instruments_;
};

// The queue's options with the depth reported to `metrics`.
WorkQueueOptions WithDepthGauge(WorkQueueOptions options, ControllerMetrics& metrics);
// The status of the exception being handled (call inside a catch block);
// `who` names what threw ("reconciler", "list_keys").
Status ThrownStatus(std::string_view who);
void LogReconcileFailed(const std::string& controller, const std::string& key, int attempt, const Status& status);
void LogListFailed(const std::string& controller, const Status& status);

}  // namespace internal

template <ControllerKey Key>
class Controller {
 public:
  Controller(ControllerOptions<Key> options, Reconciler<Key>& reconciler, const Clock& clock,
             prometheus::Registry& metrics)
      : options_(std::move(options)),
        reconciler_(reconciler),
        clock_(clock),
        metrics_(metrics, options_.name),
        queue_(clock, internal::WithDepthGauge(options_.queue, metrics_)) {}
  ~Controller() { Stop(); }
  Controller(const Controller&) = delete;
  Controller& operator=(const Controller&) = delete;

  // Starts the workers and a first Resync. Once per controller.
  void Start() {
    if (!workers_.empty()) return;
    // Asked before any worker runs, the first Resync and the one for the shards
    // held already are one queued item: every key is listed and reconciled once,
    // not twice (a restart of 1,000 virtual clusters took twice as long).
    Resync();
    if (options_.shards) options_.shards->OnGained(this, [this](const std::vector<int>&) { Resync(); });
    for (int i = 0; i < std::max(1, options_.workers); ++i) {
      workers_.emplace_back([this](std::stop_token stop) { Work(stop); });
    }
  }
  // Returns when no worker runs any more: reconciles under way finish, keys
  // still queued are left (the next start lists them again).
  void Stop() {
    if (options_.shards) options_.shards->OnGained(this, nullptr);
    queue_.ShutDown();
    for (auto& worker : workers_) worker.request_stop();
    workers_.clear();  // joins
  }

  // Queues `key` unless another replica's shard holds it.
  // kLow for sweeps over everything (WorkQueue: behind every normal key).
  void Enqueue(const Key& key, Priority priority = Priority::kNormal) {
    if (Owns(key)) queue_.Add(Item(key), priority);
  }
  void Resync() { queue_.Add(Item()); }

  const std::string& name() const { return options_.name; }
  // This replica acts on `key` now (always true without shards).
  bool Owns(const Key& key) const {
    if (!options_.shards) return true;
    const std::string sharded = options_.shard_key ? options_.shard_key(key) : EncodeKey(key);
    return options_.shards->Holds(ShardOf(sharded, options_.shards->shard_count()));
  }
  std::size_t QueueLength() const { return queue_.Len(); }
  // Every key due has been reconciled (WorkQueue::AwaitIdle); false on timeout.
  bool AwaitIdle(std::chrono::milliseconds timeout) const { return queue_.AwaitIdle(timeout); }

 private:
  // A key, or nullopt: the resync (list every key).
  using Item = std::optional<Key>;

  void Work(std::stop_token stop) {
    while (std::optional<Item> item = queue_.Get(stop)) {
      if (*item) {
        Process(**item, *item);
      } else {
        RunResync();
      }
      queue_.Done(*item);
    }
  }

  void Process(const Key& key, const Item& item) {
    if (!Owns(key)) {  // the shard was lost while the key waited
      queue_.Forget(item);
      return;
    }
    const TimePoint start = clock_.Now();
    const Outcome outcome = ReconcileCaught(key);
    metrics_.Observe(clock_.Now() - start);
    switch (outcome.kind()) {
      case Outcome::Kind::kDone:
        queue_.Forget(item);
        metrics_.Success();
        break;
      case Outcome::Kind::kRequeueAfter:
        queue_.Forget(item);
        queue_.AddAfter(item, outcome.delay());
        metrics_.Requeue();
        break;
      case Outcome::Kind::kError:
        internal::LogReconcileFailed(options_.name, EncodeKey(key), queue_.NumRequeues(item) + 1, outcome.status());
        queue_.AddRateLimited(item);
        metrics_.Error();
        break;
    }
  }

  Outcome ReconcileCaught(const Key& key) {
    try {
      return reconciler_.Reconcile(key);
    } catch (...) {
      return Outcome::Error(internal::ThrownStatus("reconciler"));
    }
  }

  void RunResync() {
    if (!options_.list_keys) return;
    const Item resync;
    Result<std::vector<Key>> keys = Internal("list_keys did not return");
    try {
      keys = options_.list_keys();
    } catch (...) {
      keys = internal::ThrownStatus("list_keys");
    }
    if (!keys.ok()) {
      internal::LogListFailed(options_.name, keys.status());
      queue_.AddRateLimited(resync);
      return;
    }
    queue_.Forget(resync);
    for (const Key& key : *keys) Enqueue(key, Priority::kLow);
  }

  const ControllerOptions<Key> options_;
  Reconciler<Key>& reconciler_;
  const Clock& clock_;
  internal::ControllerMetrics metrics_;
  WorkQueue<Item> queue_;
  std::vector<std::jthread> workers_;
};

}  // namespace septa::reconcile
