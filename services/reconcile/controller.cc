#include "services/reconcile/controller.h"

#include <prometheus/counter.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>
#include <spdlog/spdlog.h>

#include <exception>

namespace septa::reconcile::internal {
namespace {

// From a quick database write to a slow cloud call.
const prometheus::Histogram::BucketBoundaries& DurationBuckets() {
  static const prometheus::Histogram::BucketBoundaries buckets = {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1,
                                                                  0.25,  0.5,    1,     2.5,  5,     10,   30};
  return buckets;
}

prometheus::Family<prometheus::Counter>& Results(prometheus::Registry& registry) {
  return prometheus::BuildCounter()
      .Name("septa_reconcile_total")
      .Help("Reconcile calls by controller and result (success, requeue, error)")
      .Register(registry);
}

}  // namespace

struct ControllerMetrics::Instruments {
  Instruments(prometheus::Registry& registry, const std::string& name)
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

  prometheus::Gauge& depth;
  prometheus::Histogram& duration;
  prometheus::Counter& success;
  prometheus::Counter& requeue;
  prometheus::Counter& error;
  prometheus::Counter& errors;
};

ControllerMetrics::ControllerMetrics(prometheus::Registry& registry, const std::string& name)
    : instruments_(std::make_unique<Instruments>(registry, name)) {}

ControllerMetrics::~ControllerMetrics() = default;

void ControllerMetrics::SetDepth(std::size_t ready) { instruments_->depth.Set(static_cast<double>(ready)); }

void ControllerMetrics::Observe(TimePoint::duration took) {
  instruments_->duration.Observe(std::chrono::duration<double>(took).count());
}

void ControllerMetrics::Success() { instruments_->success.Increment(); }

void ControllerMetrics::Requeue() { instruments_->requeue.Increment(); }

void ControllerMetrics::Error() {
  instruments_->error.Increment();
  instruments_->errors.Increment();
}

WorkQueueOptions WithDepthGauge(WorkQueueOptions options, ControllerMetrics& metrics) {
  options.on_depth = [&metrics](std::size_t n) { metrics.SetDepth(n); };
  return options;
}

Status ThrownStatus(std::string_view who) {
  try {
    throw;
  } catch (const std::exception& e) {
    return Internal(std::string(who) + " threw: " + e.what());
  } catch (...) {
    return Internal(std::string(who) + " threw a non-standard exception");
  }
}

void LogReconcileFailed(const std::string& controller, const std::string& key, int attempt, const Status& status) {
  spdlog::warn("controller {}: reconciling {} failed (attempt {}): {}", controller, key, attempt, status.ToString());
}

void LogListFailed(const std::string& controller, const Status& status) {
  spdlog::warn("controller {}: listing keys to resync failed, retrying with backoff: {}", controller,
               status.ToString());
}

}  // namespace septa::reconcile::internal
