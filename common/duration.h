#pragma once

#include <chrono>
#include <string>
#include <string_view>

#include "common/status.h"

namespace septa {

// Parses a Go-style duration ("90m", "24h", "1h30m", "45s", "7d" is not
// accepted) into seconds. The error names `field`.
Result<std::chrono::seconds> ParseDuration(std::string_view field, std::string_view text);

// Formats seconds as the shortest Go-style text ("1h30m", "15m", "0s").
std::string FormatDuration(std::chrono::seconds d);

}  // namespace septa
