// Fuzzes the `filter` parameter of ListTenants (services/core/tenant_query.h).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "services/core/tenant_query.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  septa::core::TenantQuery query;
  (void)septa::core::ParseTenantFilter(std::string_view(reinterpret_cast<const char*>(data), size), query);
  return 0;
}
