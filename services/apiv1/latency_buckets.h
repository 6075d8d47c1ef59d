// Histogram buckets (seconds) for request latency, the same for REST and
// gRPC so that their dashboards compare.
#pragma once

#include <vector>

namespace septa::apiv1 {

inline const std::vector<double>& RequestLatencyBuckets() {
  static const std::vector<double> buckets = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5};
  return buckets;
}

}  // namespace septa::apiv1
