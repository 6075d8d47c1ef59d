#include "services/cmd/septa-bench/arguments.h"

#include <exception>
#include <sstream>

namespace septa::bench {

Result<std::vector<std::uint64_t>> ParseSeeds(const std::string& text) {
  std::vector<std::uint64_t> seeds;
  std::stringstream list(text);
  std::string item;
  while (std::getline(list, item, ',')) {
    const std::size_t dash = item.find('-');
    try {
      const std::uint64_t first = std::stoull(item.substr(0, dash));
      const std::uint64_t last = dash == std::string::npos ? first : std::stoull(item.substr(dash + 1));
      if (last < first || last - first > 10000) return InvalidArgument("bad seed range " + item);
      for (std::uint64_t s = first; s <= last; ++s) seeds.push_back(s);
    } catch (const std::exception&) {
      return InvalidArgument("--seeds: '" + item + "' is not a seed or a range like 42-51");
    }
  }
  if (seeds.empty()) return InvalidArgument("--seeds: no seed given");
  return seeds;
}

}  // namespace septa::bench
