// Kubernetes resource quantities in the canonical text the API server
// prints, so that what Septa (or kubesim) writes compares equal to what it
// later reads back, and the parsing of what it prints and of what clients
// send ("500m", "96", "1Ti", "128Gi", "1e3").
#pragma once

#include <string>
#include <string_view>

#include "common/status.h"

namespace septa {

// The canonical text for a quantity of `milli` thousandths of its unit:
// whole numbers with the largest suffix that keeps them whole (binary: Ki,
// Mi, Gi, ... for 1024 and above; decimal: k, M, G, ...), fractions in
// millis ("1500m"). 2000 -> "2", 1073741824000 binary -> "1Gi".
std::string FormatQuantityMilli(long long milli, bool binary);

// The quantity in thousandths of its unit (cpu "500m" -> 500, memory "1Ki" ->
// 1,024,000). InvalidArgument for anything else, negative values included.
Result<long long> ParseQuantityMilli(std::string_view quantity);

}  // namespace septa
