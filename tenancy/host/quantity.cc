#include "tenancy/host/quantity.h"

#include <array>
#include <string_view>

namespace septa::tenancy::host {

std::string CpuQuantity(std::int64_t milli) {
  if (milli % 1000 == 0) return std::to_string(milli / 1000);
  return std::to_string(milli) + "m";
}

std::string MemoryQuantity(std::int64_t mib) {
  static constexpr std::array<std::string_view, 5> kSuffixes = {"Mi", "Gi", "Ti", "Pi", "Ei"};
  std::size_t i = 0;
  while (mib != 0 && mib % 1024 == 0 && i + 1 < kSuffixes.size()) {
    mib /= 1024;
    ++i;
  }
  return std::to_string(mib) + std::string(kSuffixes[i]);
}

std::int64_t MibToMegabytes(std::int64_t mib) { return mib * 1024 * 1024 / 1'000'000; }

}  // namespace septa::tenancy::host
