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
// Triggers call Enqueue(key): a NOTIFY's payload (store::NotificationListener),
// an informer's events (InformerTrigger), another controller. Enqueue("") or
// Resync() lists every key (ControllerOptions::list_keys) and enqueues those
// this replica acts on, at low priority (behind the keys events ask for):
// after a trigger may have been lost (a reconnect), at Start, and when
// ShardLeases gains a shard.
//
// Metrics (families shared by every controller of a registry, label
// controller="<name>"): septa_reconcile_queue_depth (keys ready),
// septa_reconcile_duration_seconds (per Reconcile call, by the injected
// clock), septa_reconcile_total{result=success|requeue|error},
// septa_reconcile_errors_total (errors and exceptions).
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <stop_token>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "common/clock.h"
#include "common/status.h"
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

class Reconciler {
 public:
  virtual ~Reconciler() = default;
  // Level-based and idempotent: reads the desired and the observed state of
  // the object named `key` and makes them agree, whatever happened before.
  virtual Outcome Reconcile(const std::string& key) = 0;
};

struct ControllerOptions {
  std::string name{};  // the metrics' controller label, the logs' prefix
  int workers = 1;
  WorkQueueOptions queue{};  // on_depth is the controller's
  // Every key the controller is responsible for, on all shards. Unset: Resync does nothing.
  std::function<Result<std::vector<std::string>>()> list_keys{};
  // With several replicas: act only on keys of the shards held (the rest are
  // dropped, their holder acts on them); the controller resyncs on every
  // shard gained. Controllers may share one ShardLeases (the syncer acts on
  // the provisioner's shards). nullptr: act on every key.
  ShardLeases* shards = nullptr;
  // The part of a key that is sharded (a view into the key); unset: the
  // whole key. The syncer's keys "<tenant>/<vcluster>/<ns>/<name>" shard on
  // "<tenant>/<vcluster>", so they follow the provisioner's shard of their
  // virtual cluster.
  std::function<std::string_view(std::string_view key)> shard_key{};
};

class Controller {
 public:
  Controller(ControllerOptions options, Reconciler& reconciler, const Clock& clock, prometheus::Registry& metrics);
  ~Controller();  // Stop
  Controller(const Controller&) = delete;
  Controller& operator=(const Controller&) = delete;

  // Starts the workers and a first Resync. Once per controller.
  void Start();
  // Returns when no worker runs any more: reconciles under way finish, keys
  // still queued are left (the next start lists them again).
  void Stop();

  // Queues `key` unless another replica's shard holds it; "" means Resync.
  // kLow for sweeps over everything (WorkQueue: behind every normal key).
  void Enqueue(const std::string& key, Priority priority = Priority::kNormal);
  void Resync();

  const std::string& name() const { return options_.name; }
  // This replica acts on `key` now (always true without shards).
  bool Owns(const std::string& key) const;
  std::size_t QueueLength() const { return queue_.Len(); }
  // Every key due has been reconciled (WorkQueue::AwaitIdle); false on timeout.
  bool AwaitIdle(std::chrono::milliseconds timeout) const { return queue_.AwaitIdle(timeout); }

 private:
  struct Metrics;
  void Work(std::stop_token stop);
  void Process(const std::string& key);
  void RunResync();
  Outcome ReconcileCaught(const std::string& key);

  const ControllerOptions options_;
  Reconciler& reconciler_;
  const Clock& clock_;
  std::unique_ptr<Metrics> metrics_;
  WorkQueue queue_;
  std::vector<std::jthread> workers_;
};

}  // namespace septa::reconcile
