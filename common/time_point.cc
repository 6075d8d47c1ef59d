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

namespace {

// `count` decimal digits at `at`, or nullopt.
std::optional<int> Digits(std::string_view text, std::size_t at, std::size_t count) {
  if (at + count > text.size()) return std::nullopt;
  int value = 0;
  for (std::size_t i = at; i < at + count; ++i) {
    if (text[i] < '0' || text[i] > '9') return std::nullopt;
    value = value * 10 + (text[i] - '0');
  }
  return value;
}

}  // namespace

std::optional<TimePoint> ParseRfc3339(std::string_view text) {
  using namespace std::chrono;
  const auto year = Digits(text, 0, 4), month = Digits(text, 5, 2), day = Digits(text, 8, 2);
  const auto hour = Digits(text, 11, 2), minute = Digits(text, 14, 2), second = Digits(text, 17, 2);
  if (!year || !month || !day || !hour || !minute || !second || text[4] != '-' || text[7] != '-' ||
      (text[10] != 'T' && text[10] != 't') || text[13] != ':' || text[16] != ':') {
    return std::nullopt;
  }
  const year_month_day date{std::chrono::year(*year), std::chrono::month(static_cast<unsigned>(*month)),
                            std::chrono::day(static_cast<unsigned>(*day))};
  if (!date.ok() || *hour > 23 || *minute > 59 || *second > 59) return std::nullopt;
  std::size_t at = 19;
  nanoseconds fraction{0};
  if (at < text.size() && text[at] == '.') {
    std::size_t digits = 0;
    long long value = 0;
    for (++at; at < text.size() && text[at] >= '0' && text[at] <= '9'; ++at, ++digits) {
      if (digits < 9) value = value * 10 + (text[at] - '0');
    }
    if (digits == 0 || digits > 9) return std::nullopt;
    for (std::size_t i = digits; i < 9; ++i) value *= 10;
    fraction = nanoseconds(value);
  }
  minutes offset{0};
  if (at < text.size() && (text[at] == 'Z' || text[at] == 'z')) {
    ++at;
  } else if (at < text.size() && (text[at] == '+' || text[at] == '-')) {
    const auto oh = Digits(text, at + 1, 2), om = Digits(text, at + 4, 2);
    if (!oh || !om || at + 3 >= text.size() || text[at + 3] != ':' || *oh > 23 || *om > 59) return std::nullopt;
    offset = hours(*oh) + minutes(*om);
    if (text[at] == '-') offset = -offset;
    at += 6;
  } else {
    return std::nullopt;
  }
  if (at != text.size()) return std::nullopt;
  // In whole seconds first: a TimePoint counts nanoseconds in 64 bits (the
  // years 1678 to 2261), and converting a year outside would overflow.
  const seconds since_epoch =
      (sys_days(date) + hours(*hour) + minutes(*minute) + seconds(*second) - offset).time_since_epoch();
  const seconds first = ceil<seconds>(TimePoint::min().time_since_epoch());
  const seconds last = floor<seconds>(TimePoint::max().time_since_epoch()) - seconds(1);  // room for the fraction
  if (since_epoch < first || since_epoch > last) return std::nullopt;
  return TimePoint(duration_cast<TimePoint::duration>(since_epoch) + fraction);
}

}  // namespace septa
