#include "services/base/ip_address.h"

#include <arpa/inet.h>

namespace septa::base {

bool IsIpAddress(const std::string& text) {
  in6_addr parsed;  // large enough for either family
  return ::inet_pton(AF_INET, text.c_str(), &parsed) == 1 || ::inet_pton(AF_INET6, text.c_str(), &parsed) == 1;
}

}  // namespace septa::base
