// Request-target parsing shared by the servers on septa_http (the REST API,
// kubesim). Boost 1.74 has no Boost.URL, so the little percent-decoding
// they need is written here.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace septa::http {

struct Target {
  std::string path;                          // as sent (still escaped), for messages
  std::vector<std::string> segments;         // split at '/', then decoded; empty ones dropped
  std::map<std::string, std::string> query;  // decoded ('+' is a space); a repeated key keeps the last value
};

// nullopt when the target has a malformed %-escape.
std::optional<Target> ParseTarget(std::string_view target);

// Every value of query parameter `key` in `target`, in order (Target::query
// keeps only the last); pairs with a malformed %-escape are left out.
std::vector<std::string> QueryValues(std::string_view target, std::string_view key);

std::optional<std::string> PercentDecode(std::string_view text, bool plus_is_space);

// `text` as one path segment (RFC 3986 pchar): unreserved characters, ':'
// and '@' as they are, every other byte %-escaped ('/' too, so that it stays
// inside the segment). PercentDecode(..., false) gives `text` back.
std::string PercentEncodePathSegment(std::string_view text);

}  // namespace septa::http
