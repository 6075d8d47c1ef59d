#include "services/reconcile/controller.h"

#include <prometheus/counter.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>
#include <spdlog/spdlog.h>

#include "services/reconcile/shard.h"

namespace septa::reconcile {
namespace {

// The key that stands for "list everything": no object is named "".
const std::string kResyncKey;

// From a quick database write to a slow cloud call.
const prometheus::Histogram::BucketBoundaries& DurationBuckets() {
  static const prometheus::Histogram::BucketBoundaries buckets = {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1,
                                                                  0.25,  0.5,    1,     2.5,  5,     10,   30};
  return buckets;
}

}  // namespace

struct Controller::Metrics {
  Metrics(prometheus::Registry& registry, const std::string& name)
      : depth(prometheus::BuildGauge()
                  .Name("septa_reconcile_queue_depth")
                  .Help("Keys ready for a controller's workers")
                  .Register(registry)
                  .Add({{"controller", name}})),
        duration(prometheus::BuildHistogram()
                     .Name("septa_reconcile_duration_seconds")
                     .Help("Time one Reconcile call took, by controller")
                     .Register(registry)
                     .Add({{"controller", name}}, DurationBuckets())),
        success(Results(registry).Add({{"controller", name}, {"result", "success"}})),
        requeue(Results(registry).Add({{"controller", name}, {"result", "requeue"}})),
        error(Results(registry).Add({{"controller", name}, {"result", "error"}})),
        errors(prometheus::BuildCounter()
                   .Name("septa_reconcile_errors_total")
                   .Help("Reconcile calls that failed or threw, by controller")
                   .Register(registry)
                   .Add({{"controller", name}})) {}

  static prometheus::Family<prometheus::Counter>& Results(prometheus::Registry& registry) {
    return prometheus::BuildCounter()
        .Name("septa_reconcile_total")
        .Help("Reconcile calls by controller and result (success, requeue, error)")
        .Register(registry);
  }

  prometheus::Gauge& depth;
  prometheus::Histogram& duration;
  prometheus::Counter& success;
  prometheus::Counter& requeue;
  prometheus::Counter& error;
  prometheus::Counter& errors;
};

namespace {

WorkQueueOptions WithDepthGauge(WorkQueueOptions options, prometheus::Gauge& depth) {
  options.on_depth = [&depth](std::size_t n) { depth.Set(static_cast<double>(n)); };
  return options;
}

}  // namespace

Controller::Controller(ControllerOptions options, Reconciler& reconciler, const Clock& clock,
                       prometheus::Registry& metrics)
    : options_(std::move(options)),
      reconciler_(reconciler),
      clock_(clock),
      metrics_(std::make_unique<Metrics>(metrics, options_.name)),
      queue_(clock, WithDepthGauge(options_.queue, metrics_->depth)) {}

Controller::~Controller() { Stop(); }

void Controller::Start() {
  if (!workers_.empty()) return;
  // Asked before any worker runs, the first Resync and the one for the shards
  // held already are one queued key: every key is listed and reconciled once,
  // not twice (a restart of 1,000 virtual clusters took twice as long).
  Resync();
  if (options_.shards) options_.shards->OnGained(this, [this](const std::vector<int>&) { Resync(); });
  for (int i = 0; i < std::max(1, options_.workers); ++i) {
    workers_.emplace_back([this](std::stop_token stop) { Work(stop); });
  }
}

void Controller::Stop() {
  if (options_.shards) options_.shards->OnGained(this, nullptr);
  queue_.ShutDown();
  for (auto& worker : workers_) worker.request_stop();
  workers_.clear();  // joins
}

bool Controller::Owns(const std::string& key) const {
  if (!options_.shards) return true;
  const std::string_view sharded = options_.shard_key ? options_.shard_key(key) : std::string_view(key);
  return options_.shards->Holds(ShardOf(sharded, options_.shards->shard_count()));
}

void Controller::Enqueue(const std::string& key, Priority priority) {
  if (key == kResyncKey || Owns(key)) queue_.Add(key, priority);
}

void Controller::Resync() { queue_.Add(kResyncKey); }

void Controller::Work(std::stop_token stop) {
  while (std::optional<std::string> key = queue_.Get(stop)) {
    Process(*key);
    queue_.Done(*key);
  }
}

void Controller::Process(const std::string& key) {
  if (key == kResyncKey) {
    RunResync();
    return;
  }
  if (!Owns(key)) {  // the shard was lost while the key waited
    queue_.Forget(key);
    return;
  }
  const TimePoint start = clock_.Now();
  const Outcome outcome = ReconcileCaught(key);
  metrics_->duration.Observe(std::chrono::duration<double>(clock_.Now() - start).count());
  switch (outcome.kind()) {
    case Outcome::Kind::kDone:
      queue_.Forget(key);
      metrics_->success.Increment();
      break;
    case Outcome::Kind::kRequeueAfter:
      queue_.Forget(key);
      queue_.AddAfter(key, outcome.delay());
      metrics_->requeue.Increment();
      break;
    case Outcome::Kind::kError:
      spdlog::warn("controller {}: reconciling {} failed (attempt {}): {}", options_.name, key,
                   queue_.NumRequeues(key) + 1, outcome.status().ToString());
      queue_.AddRateLimited(key);
      metrics_->error.Increment();
      metrics_->errors.Increment();
      break;
  }
}

Outcome Controller::ReconcileCaught(const std::string& key) {
  try {
    return reconciler_.Reconcile(key);
  } catch (const std::exception& e) {
    return Outcome::Error(Internal(std::string("reconciler threw: ") + e.what()));
  } catch (...) {
    return Outcome::Error(Internal("reconciler threw a non-standard exception"));
  }
}

void Controller::RunResync() {
  if (!options_.list_keys) return;
  Result<std::vector<std::string>> keys = Internal("list_keys did not return");
  try {
    keys = options_.list_keys();
  } catch (const std::exception& e) {
    keys = Internal(std::string("list_keys threw: ") + e.what());
  } catch (...) {
    keys = Internal("list_keys threw a non-standard exception");
  }
  if (!keys.ok()) {
    spdlog::warn("controller {}: listing keys to resync failed, retrying with backoff: {}", options_.name,
                 keys.status().ToString());
    queue_.AddRateLimited(kResyncKey);
    return;
  }
  queue_.Forget(kResyncKey);
  for (const std::string& key : *keys) {
    if (!key.empty()) Enqueue(key, Priority::kLow);
  }
}

}  // namespace septa::reconcile
