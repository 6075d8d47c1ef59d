#include "common/quantity.h"

#include <cmath>
#include <string>
#include <utility>
#include <vector>

namespace septa {

std::string FormatQuantityMilli(long long milli, bool binary) {
  if (milli % 1000 != 0) return std::to_string(milli) + "m";
  long long whole = milli / 1000;
  const bool use_binary = binary && (whole >= 1024 || whole <= -1024);
  static const char* const kBinary[] = {"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
  static const char* const kDecimal[] = {"", "k", "M", "G", "T", "P", "E"};
  const long long base = use_binary ? 1024 : 1000;
  std::size_t exponent = 0;
  while (whole != 0 && whole % base == 0 && exponent < 6) {
    whole /= base;
    ++exponent;
  }
  return std::to_string(whole) + (use_binary ? kBinary : kDecimal)[exponent];
}

Result<long long> ParseQuantityMilli(std::string_view quantity) {
  static const std::vector<std::pair<std::string_view, long double>> kSuffixes = {{"Ki", 1024.0L},
                                                                                  {"Mi", 1048576.0L},
                                                                                  {"Gi", 1073741824.0L},
                                                                                  {"Ti", 1099511627776.0L},
                                                                                  {"Pi", 1125899906842624.0L},
                                                                                  {"k", 1e3L},
                                                                                  {"M", 1e6L},
                                                                                  {"G", 1e9L},
                                                                                  {"T", 1e12L},
                                                                                  {"P", 1e15L},
                                                                                  {"m", 1e-3L}};
  const std::string q(quantity);
  std::string number = q;
  long double scale = 1.0L;
  for (const auto& [suffix, factor] : kSuffixes) {
    if (q.size() > suffix.size() && quantity.substr(q.size() - suffix.size()) == suffix) {
      number = q.substr(0, q.size() - suffix.size());
      scale = factor;
      break;
    }
  }
  const auto bad = [&] { return InvalidArgument("bad quantity \"" + q + "\""); };
  try {
    std::size_t pos = 0;
    const long double v = std::stold(number, &pos);
    const long double milli = v * scale * 1000.0L;
    if (pos != number.size() || v < 0 || !std::isfinite(milli) || milli > 9.2e18L) return bad();
    return static_cast<long long>(std::llround(milli));
  } catch (const std::exception&) {  // std::stold: invalid_argument, out_of_range
    return bad();
  }
}

}  // namespace septa
