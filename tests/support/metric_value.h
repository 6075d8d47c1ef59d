// Reading a Prometheus registry's samples in tests.
#pragma once

#include <prometheus/metric_family.h>
#include <prometheus/registry.h>

#include <map>
#include <optional>
#include <string>
#include <utility>

namespace septa::testing {

// The sample of a registry's family whose labels are exactly `labels`, with the family's type.
inline std::optional<std::pair<prometheus::MetricType, prometheus::ClientMetric>> FindSample(
    const prometheus::Registry& registry, const std::string& family, const std::map<std::string, std::string>& labels) {
  for (const auto& f : registry.Collect()) {
    if (f.name != family) continue;
    for (const auto& metric : f.metric) {
      std::map<std::string, std::string> have;
      for (const auto& label : metric.label) have[label.name] = label.value;
      if (have == labels) return std::pair{f.type, metric};
    }
  }
  return std::nullopt;
}

// The value of one sample (a histogram: its count); -1 when there is no such sample.
inline double MetricValue(const prometheus::Registry& registry, const std::string& family,
                          const std::map<std::string, std::string>& labels) {
  const auto sample = FindSample(registry, family, labels);
  if (!sample) return -1;
  switch (sample->first) {
    case prometheus::MetricType::Counter: return sample->second.counter.value;
    case prometheus::MetricType::Gauge: return sample->second.gauge.value;
    case prometheus::MetricType::Histogram: return static_cast<double>(sample->second.histogram.sample_count);
    default: return -1;
  }
}

// The sum of one histogram sample; -1 when there is no such sample.
inline double HistogramSum(const prometheus::Registry& registry, const std::string& family,
                           const std::map<std::string, std::string>& labels) {
  const auto sample = FindSample(registry, family, labels);
  return sample ? sample->second.histogram.sample_sum : -1;
}

}  // namespace septa::testing
