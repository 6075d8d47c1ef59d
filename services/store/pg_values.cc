#include "services/store/pg_values.h"

#include <boost/algorithm/hex.hpp>
#include <iterator>
#include <nlohmann/json.hpp>

namespace septa::store {

Status CheckLimit(int limit) {
  if (limit < 1 || limit > kMaxListLimit) {
    return InvalidField("limit", "must be between 1 and " + std::to_string(kMaxListLimit));
  }
  return Status::Ok();
}

std::int64_t Micros(TimePoint t) { return std::chrono::floor<std::chrono::microseconds>(t.time_since_epoch()).count(); }

TimePoint FromMicros(std::int64_t micros) {
  return TimePoint(std::chrono::duration_cast<TimePoint::duration>(std::chrono::microseconds(micros)));
}

std::optional<TimePoint> OptionalTime(const pqxx::field& f) {
  if (f.is_null()) return std::nullopt;
  return FromMicros(f.as<std::int64_t>());
}

NullableInt64::NullableInt64(const std::optional<std::int64_t>& value) : null_(!value) {
  if (value) text_ = std::to_string(*value);
}

NullableInt64 NullableMicros(const std::optional<TimePoint>& t) {
  return NullableInt64(t ? std::optional<std::int64_t>(Micros(*t)) : std::nullopt);
}

std::optional<std::int64_t> OptionalInt64(const pqxx::field& f) {
  if (f.is_null()) return std::nullopt;
  return f.as<std::int64_t>();
}

std::string LabelsJson(const std::map<std::string, std::string>& labels) { return nlohmann::json(labels).dump(); }

std::map<std::string, std::string> LabelsOf(const std::string& json) {
  return nlohmann::json::parse(json).get<std::map<std::string, std::string>>();
}

std::string JoinLines(const std::vector<std::string>& lines) {
  std::string joined;
  for (const auto& line : lines) joined += (joined.empty() ? "" : "\n") + line;
  return joined;
}

std::string ToHex(std::string_view bytes) {
  std::string hex;
  boost::algorithm::hex_lower(bytes.begin(), bytes.end(), std::back_inserter(hex));
  return hex;
}

std::string FromHex(std::string_view hex) {
  std::string bytes;
  boost::algorithm::unhex(hex.begin(), hex.end(), std::back_inserter(bytes));  // encode(..., 'hex') made it
  return bytes;
}

std::vector<std::string> SplitLines(const std::string& joined) {
  std::vector<std::string> lines;
  for (std::size_t start = 0; !joined.empty();) {
    const std::size_t end = joined.find('\n', start);
    lines.push_back(joined.substr(start, end - start));  // npos - start: to the end
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return lines;
}

}  // namespace septa::store
