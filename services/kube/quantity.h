// Kubernetes resource quantities ("500m", "96", "1Ti", "128Gi", "1e3"), as
// node capacity, allocatable and pod requests carry them.
#pragma once

#include <string>
#include <string_view>

#include "common/status.h"

namespace septa::kube {

// The quantity in thousandths of its unit (cpu "500m" -> 500, memory "1Ki" ->
// 1,024,000). InvalidArgument for anything else, negative values included.
Result<long long> ParseQuantityMilli(std::string_view quantity);

// The canonical text the API server prints for a quantity of `milli`
// thousandths: whole numbers with the largest suffix that keeps them whole
// (binary: Ki, Mi, Gi, ... for 1024 and above; decimal: k, M, G, ...),
// fractions in millis ("1500m"). 2000 -> "2", 1073741824000 binary -> "1Gi".
std::string FormatQuantityMilli(long long milli, bool binary);

}  // namespace septa::kube
