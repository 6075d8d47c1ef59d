#include "services/base/yaml_json.h"

#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <regex>
#include <string>

namespace septa::base {
namespace {

using nlohmann::json;

json Float(const std::string& s) {
  const double value = std::strtod(s.c_str(), nullptr);
  return std::isfinite(value) ? json(value) : json(s);
}

// A plain scalar resolved by the core schema.
json Resolve(const std::string& s) {
  if (s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL") return nullptr;
  if (s == "true" || s == "True" || s == "TRUE") return true;
  if (s == "false" || s == "False" || s == "FALSE") return false;
  static const std::regex kDecimal(R"([-+]?[0-9]+)");
  static const std::regex kOctal(R"(0o[0-7]+)");
  static const std::regex kHex(R"(0x[0-9a-fA-F]+)");
  static const std::regex kFloat(R"([-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?)");
  // Numbers JSON cannot hold (beyond 64 bits in octal or hex, floats that
  // overflow to infinity) stay strings rather than change value.
  const auto integer = [&s](std::size_t skip, int base) -> json {
    std::int64_t value = 0;
    const char* first = s.data() + skip;
    if (first[0] == '+') ++first;  // from_chars takes '-' but not '+'
    const auto [end, error] = std::from_chars(first, s.data() + s.size(), value, base);
    if (error == std::errc() && end == s.data() + s.size()) return value;
    return base == 10 ? Float(s) : json(s);
  };
  if (std::regex_match(s, kDecimal)) return integer(0, 10);
  if (std::regex_match(s, kOctal)) return integer(2, 8);
  if (std::regex_match(s, kHex)) return integer(2, 16);
  if (std::regex_match(s, kFloat)) return Float(s);
  return s;
}

}  // namespace

json YamlToJson(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Null:
    case YAML::NodeType::Undefined: return nullptr;
    case YAML::NodeType::Sequence: {
      json array = json::array();
      for (const auto& item : node) array.push_back(YamlToJson(item));
      return array;
    }
    case YAML::NodeType::Map: {
      json object = json::object();
      for (const auto& kv : node) object[kv.first.as<std::string>()] = YamlToJson(kv.second);
      return object;
    }
    case YAML::NodeType::Scalar:
      // "?" marks a plain scalar; quoted ones carry "!", explicit tags their own.
      return node.Tag() == "?" ? Resolve(node.Scalar()) : json(node.Scalar());
  }
  return nullptr;
}

}  // namespace septa::base
