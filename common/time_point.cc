#include "common/time_point.h"

#include <array>
#include <ctime>

namespace septa {

std::string FormatRfc3339(TimePoint t) {
  const std::time_t secs = std::chrono::system_clock::to_time_t(std::chrono::floor<std::chrono::seconds>(t));
  std::tm tm{};
  gmtime_r(&secs, &tm);
  std::array<char, 32> buf{};
  std::strftime(buf.data(), buf.size(), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf.data();
}

}  // namespace septa
