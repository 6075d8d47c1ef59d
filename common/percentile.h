// The percentile every benchmark and load tool prints, defined once so that
// their figures in docs/BENCHMARKS.md mean the same thing: the nearest rank,
// the value at index floor(q * n) of the sorted sample (clamped to the last),
// so p50 of {1,2,3,4} is 3 and p100 is the maximum.
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

namespace septa {

// 0 for an empty sample. Takes the sample by value: it is partly reordered.
template <class T>
T Percentile(std::vector<T> sample, double q) {
  if (sample.empty()) return T{};
  const auto rank = static_cast<std::size_t>(std::max(0.0, q) * static_cast<double>(sample.size()));
  const std::size_t k = std::min(sample.size() - 1, rank);
  std::nth_element(sample.begin(), sample.begin() + static_cast<std::ptrdiff_t>(k), sample.end());
  return sample[k];
}

}  // namespace septa
