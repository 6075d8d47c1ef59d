// Flags the septa-bench subcommands share.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"

namespace septa::bench {

// --seeds: "42", "42-51" or a comma list of either.
Result<std::vector<std::uint64_t>> ParseSeeds(const std::string& text);

}  // namespace septa::bench
