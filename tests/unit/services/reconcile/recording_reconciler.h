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

#include "services/reconcile/controller.h"
#include "tests/support/metric_value.h"

namespace septa::reconcile::testing {

class RecordingReconciler final : public Reconciler<std::string> {
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

using septa::testing::HistogramSum;
using septa::testing::MetricValue;

}  // namespace septa::reconcile::testing
