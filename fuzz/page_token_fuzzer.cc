// Fuzzes the page-token decoder of ListTenants (services/core/tenant_query.h):
// any string a client sends as page_token, and the round trip of every name.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "services/core/tenant_query.h"
#include "services/core/validation.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  (void)septa::core::DecodePageToken(input);
  // A token made of a tenant name decodes to that name; nothing else decodes.
  const auto decoded = septa::core::DecodePageToken(septa::core::EncodePageToken(input));
  if (decoded.ok() != septa::core::IsDns1123Label(input)) std::abort();
  if (decoded.ok() && *decoded != input) std::abort();
  return 0;
}
