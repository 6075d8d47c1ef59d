// Request-target parsing for the REST API. Boost 1.74 has no Boost.URL, so
// the little percent-decoding the API needs is written here.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace septa::rest {

struct Target {
  std::string path;                          // decoded
  std::map<std::string, std::string> query;  // decoded; a repeated key keeps the last value
};

// nullopt when the target has a malformed %-escape.
std::optional<Target> ParseTarget(std::string_view target);

std::optional<std::string> PercentDecode(std::string_view text, bool plus_is_space);

}  // namespace septa::rest
