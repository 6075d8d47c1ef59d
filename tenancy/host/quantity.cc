#include "tenancy/host/quantity.h"

#include "common/quantity.h"

namespace septa::tenancy::host {

std::string CpuQuantity(std::int64_t milli) { return FormatQuantityMilli(milli, false); }

std::string MemoryQuantity(std::int64_t mib) { return FormatQuantityMilli(mib * 1024 * 1024 * 1000, true); }

std::int64_t MibToMegabytes(std::int64_t mib) { return mib * 1024 * 1024 / 1'000'000; }

}  // namespace septa::tenancy::host
