#include "common/duration.h"

#include <cstdint>
#include <limits>

namespace septa {

Result<std::chrono::seconds> ParseDuration(std::string_view field, std::string_view text) {
  const std::string f(field);
  if (text.empty()) return InvalidField(f, "is empty; expected a duration such as \"90m\" or \"1h30m\"");
  constexpr std::int64_t kMax = std::int64_t{10} * 365 * 24 * 3600;  // ten years is plenty
  std::int64_t total = 0;
  std::size_t i = 0;
  while (i < text.size()) {
    std::int64_t n = 0;
    std::size_t digits = 0;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
      n = n * 10 + (text[i] - '0');
      if (n > kMax) return InvalidField(f, "is too long; at most 87600h");
      ++i;
      ++digits;
    }
    if (digits == 0 || i == text.size()) {
      return InvalidField(f, "\"" + std::string(text) + "\" is not a duration; use units h, m, s as in \"1h30m\"");
    }
    std::int64_t unit = 0;
    switch (text[i]) {
      case 'h': unit = 3600; break;
      case 'm': unit = 60; break;
      case 's': unit = 1; break;
      default:
        return InvalidField(
            f, "unknown unit '" + std::string(1, text[i]) + "' in \"" + std::string(text) + "\"; use h, m or s");
    }
    ++i;
    total += n * unit;
    if (total > kMax) return InvalidField(f, "is too long; at most 87600h");
  }
  return std::chrono::seconds(total);
}

std::string FormatDuration(std::chrono::seconds d) {
  std::int64_t s = d.count();
  if (s == 0) return "0s";
  std::string out;
  if (s >= 3600) {
    out += std::to_string(s / 3600) + "h";
    s %= 3600;
  }
  if (s >= 60) {
    out += std::to_string(s / 60) + "m";
    s %= 60;
  }
  if (s > 0) out += std::to_string(s) + "s";
  return out;
}

}  // namespace septa
