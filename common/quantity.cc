#include "common/quantity.h"

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

}  // namespace septa
