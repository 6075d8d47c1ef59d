// Kubernetes resource quantities in the canonical text the API server
// prints, so that what Septa (or kubesim) writes compares equal to what it
// later reads back. Parsing lives with the client (services/kube/quantity.h).
#pragma once

#include <string>

namespace septa {

// The canonical text for a quantity of `milli` thousandths of its unit:
// whole numbers with the largest suffix that keeps them whole (binary: Ki,
// Mi, Gi, ... for 1024 and above; decimal: k, M, G, ...), fractions in
// millis ("1500m"). 2000 -> "2", 1073741824000 binary -> "1Gi".
std::string FormatQuantityMilli(long long milli, bool binary);

}  // namespace septa
