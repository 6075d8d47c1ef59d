// A Reconciler for tests: answers each call from a per-key script (then
// Done), records the calls, and lets a test wait for them.
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include <prometheus/registry.h>

#include "services/reconcile/controller.h"

namespace septa::reconcile::testing {

class RecordingReconciler final : public Reconciler {
 public:
  using Step = std::function<Outcome()>;

  // The next calls for `key` run these steps in order; after them, Done.
  void Script(const std::string& key, std::vector<Step> steps) {
    std::lock_guard lock(mu_);
    for (auto& step : steps) scripts_[key].push_back(std::move(step));
  }

  Outcome Reconcile(const std::string& key) override {
    Step step = [] { return Outcome::Done(); };
    {
      std::lock_guard lock(mu_);
      calls_.push_back(key);
      called_.notify_all();
      if (auto it = scripts_.find(key); it != scripts_.end() && !it->second.empty()) {
        step = std::move(it->second.front());
        it->second.pop_front();
      }
    }
    return step();
  }

  std::vector<std::string> calls() const {
    std::lock_guard lock(mu_);
    return calls_;
  }
  int CallsOf(const std::string& key) const {
    std::lock_guard lock(mu_);
    int n = 0;
    for (const auto& call : calls_) n += call == key;
    return n;
  }
  // Waits (bounded, for a broken runtime) until `done` holds of the calls so far.
  bool AwaitCalls(const std::function<bool(const std::vector<std::string>&)>& done,
                  std::chrono::milliseconds bound = std::chrono::seconds(10)) const {
    std::unique_lock lock(mu_);
    return called_.wait_for(lock, bound, [&] { return done(calls_); });
  }

 private:
  mutable std::mutex mu_;
  mutable std::condition_variable called_;
  std::map<std::string, std::deque<Step>> scripts_;
  std::vector<std::string> calls_;
};

// The value of one sample of a registry's family, by labels (a histogram: its count).
inline double MetricValue(const prometheus::Registry& registry, const std::string& family,
                          const std::map<std::string, std::string>& labels) {
  for (const auto& f : registry.Collect()) {
    if (f.name != family) continue;
    for (const auto& metric : f.metric) {
      std::map<std::string, std::string> have;
      for (const auto& label : metric.label) have[label.name] = label.value;
      if (have != labels) continue;
      switch (f.type) {
        case prometheus::MetricType::Counter: return metric.counter.value;
        case prometheus::MetricType::Gauge: return metric.gauge.value;
        case prometheus::MetricType::Histogram: return static_cast<double>(metric.histogram.sample_count);
        default: return -1;
      }
    }
  }
  return -1;  // no such sample
}

inline double HistogramSum(const prometheus::Registry& registry, const std::string& family,
                           const std::map<std::string, std::string>& labels) {
  for (const auto& f : registry.Collect()) {
    if (f.name != family) continue;
    for (const auto& metric : f.metric) {
      std::map<std::string, std::string> have;
      for (const auto& label : metric.label) have[label.name] = label.value;
      if (have == labels) return metric.histogram.sample_sum;
    }
  }
  return -1;
}

}  // namespace septa::reconcile::testing
