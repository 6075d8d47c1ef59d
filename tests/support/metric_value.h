// Reading a Prometheus registry's samples in tests.
#pragma once

#include <prometheus/registry.h>

#include <map>
#include <string>

namespace septa::testing {

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

}  // namespace septa::testing
