// Whether a string is an IPv4 or IPv6 address literal in the forms
// inet_pton(3) accepts — no brackets, no port, no IPv6 zone — as a
// NetworkPolicy's ipBlock, a certificate's IP subject alternative name, a
// TLS server name (an IP is never sent as SNI) and a pod's hostAliases need
// it. Written here because the pure layers (tenancy/sync) need it too and
// may not call into the C library's network functions; the tests check it
// against inet_pton.
#pragma once

#include <string_view>

namespace septa {

// IPv4: four decimal parts 0-255 without leading zeros ("10.0.0.7").
bool IsIpv4Address(std::string_view text);
// IPv6 (RFC 4291 2.2): eight groups of 1-4 hex digits, one "::" standing
// for one or more zero groups, the last two groups possibly an IPv4 address.
bool IsIpv6Address(std::string_view text);
bool IsIpAddress(std::string_view text);

}  // namespace septa
