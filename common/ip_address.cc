#include "common/ip_address.h"

#include <cstddef>

namespace septa {

namespace {

bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsHexDigit(char c) { return IsDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }

// Groups of 1-4 hex digits separated by ':', possibly ending in an IPv4
// address (counted as two groups); `groups` gets how many. Empty is zero.
bool HexGroups(std::string_view text, bool ipv4_tail_allowed, int& groups) {
  groups = 0;
  if (text.empty()) return true;
  std::size_t start = 0;
  while (true) {
    const std::size_t colon = text.find(':', start);
    const std::string_view group = text.substr(start, colon == std::string_view::npos ? text.npos : colon - start);
    if (colon == std::string_view::npos && ipv4_tail_allowed && group.find('.') != std::string_view::npos) {
      if (!IsIpv4Address(group)) return false;
      groups += 2;
      return true;
    }
    if (group.empty() || group.size() > 4) return false;
    for (char c : group) {
      if (!IsHexDigit(c)) return false;
    }
    ++groups;
    if (colon == std::string_view::npos) return true;
    start = colon + 1;
  }
}

}  // namespace

bool IsIpv4Address(std::string_view text) {
  int parts = 0;
  std::size_t start = 0;
  while (true) {
    const std::size_t dot = text.find('.', start);
    const std::string_view part = text.substr(start, dot == std::string_view::npos ? text.npos : dot - start);
    if (part.empty() || part.size() > 3 || (part.size() > 1 && part[0] == '0')) return false;
    int value = 0;
    for (char c : part) {
      if (!IsDigit(c)) return false;
      value = value * 10 + (c - '0');
    }
    if (value > 255 || ++parts > 4) return false;
    if (dot == std::string_view::npos) return parts == 4;
    start = dot + 1;
  }
}

bool IsIpv6Address(std::string_view text) {
  const std::size_t gap = text.find("::");
  int groups = 0;
  if (gap == std::string_view::npos) return HexGroups(text, true, groups) && groups == 8;
  if (text.find("::", gap + 1) != std::string_view::npos) return false;  // one "::" at most
  int before = 0;
  int after = 0;
  return HexGroups(text.substr(0, gap), false, before) && HexGroups(text.substr(gap + 2), true, after) &&
         before + after <= 7;
}

bool IsIpAddress(std::string_view text) { return IsIpv4Address(text) || IsIpv6Address(text); }

}  // namespace septa
