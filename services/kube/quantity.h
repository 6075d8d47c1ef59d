// Kubernetes resource quantities ("500m", "96", "1Ti", "128Gi", "1e3"), as
// node capacity, allocatable and pod requests carry them.
#pragma once

#include <string_view>

#include "common/quantity.h"  // FormatQuantityMilli, its inverse
#include "common/status.h"

namespace septa::kube {

// The quantity in thousandths of its unit (cpu "500m" -> 500, memory "1Ki" ->
// 1,024,000). InvalidArgument for anything else, negative values included.
Result<long long> ParseQuantityMilli(std::string_view quantity);

}  // namespace septa::kube
