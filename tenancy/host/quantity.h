// Kubernetes quantities as the API server writes them back (canonical form),
// so that what Septa applies compares equal to what it later reads: CPU in
// whole cores (with a decimal suffix from 1000 on) or millicores, memory in
// the largest binary suffix that keeps it whole (common/quantity.h).
#pragma once

#include <cstdint>
#include <string>

namespace septa::tenancy::host {

std::string CpuQuantity(std::int64_t milli);    // 4000 -> "4", 1500 -> "1500m", 2000000 -> "2k"
std::string MemoryQuantity(std::int64_t mib);   // 2048 -> "2Gi", 1536 -> "1536Mi"; mib up to 8 Pi
std::int64_t MibToMegabytes(std::int64_t mib);  // 10^6 bytes, rounded down: 1024 -> 1073

}  // namespace septa::tenancy::host
