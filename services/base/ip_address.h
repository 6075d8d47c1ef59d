// Whether a string is an IPv4 or IPv6 address literal (inet_pton's forms:
// no brackets, no port, no IPv6 zone), as a NetworkPolicy's ipBlock and a
// certificate's IP subject alternative name need it.
#pragma once

#include <string>

namespace septa::base {

bool IsIpAddress(const std::string& text);

}  // namespace septa::base
