// Conversions between the domain's values and PostgreSQL's, shared by the
// repositories of services/store.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <pqxx/pqxx>
#include <string>
#include <vector>

#include "common/status.h"
#include "common/time_point.h"

namespace septa::store {

// Rows never contain more than this; callers ask for fewer.
inline constexpr int kMaxListLimit = 1000;
Status CheckLimit(int limit);

// Instants cross the boundary as integer microseconds since the epoch
// (septa_ts / septa_micros in migrations/0001_init.sql): exact, and
// PostgreSQL's resolution.
std::int64_t Micros(TimePoint t);
TimePoint FromMicros(std::int64_t micros);
std::optional<TimePoint> OptionalTime(const pqxx::field& f);

// A nullable bigint parameter: libpqxx 6.4 sends a null const char* as NULL.
class NullableInt64 {
 public:
  explicit NullableInt64(const std::optional<std::int64_t>& value);
  const char* param() const { return null_ ? nullptr : text_.c_str(); }

 private:
  bool null_;
  std::string text_;
};
NullableInt64 NullableMicros(const std::optional<TimePoint>& t);
std::optional<std::int64_t> OptionalInt64(const pqxx::field& f);

// A list of lines (none holding a newline) as one text for
// string_to_array($n, E'\\n'), and back from array_to_string(col, E'\\n').
std::string JoinLines(const std::vector<std::string>& lines);
std::vector<std::string> SplitLines(const std::string& joined);

// Bytes as hex for decode($n, 'hex') into a bytea column, and back from
// encode(col, 'hex'): libpqxx 6 has no binary parameters.
std::string ToHex(std::string_view bytes);
std::string FromHex(std::string_view hex);

// A string map as a jsonb object's text, and back.
std::string LabelsJson(const std::map<std::string, std::string>& labels);
std::map<std::string, std::string> LabelsOf(const std::string& json);

}  // namespace septa::store
