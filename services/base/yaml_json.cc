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

// A literal block ("|", which keeps one final line break) reads back as `s`
// when `s` has several lines, ends with exactly one line break and does not
// start with a space (which would need an indentation indicator).
bool LiteralBlockKeeps(const std::string& s) {
  const std::size_t first_break = s.find('\n');
  return first_break != std::string::npos && first_break + 1 < s.size() && s.back() == '\n' &&
         s[s.size() - 2] != '\n' && s.front() != ' ';
}

void Emit(YAML::Emitter& out, const nlohmann::ordered_json& value) {
  switch (value.type()) {
    case json::value_t::null: out << YAML::Null; break;
    case json::value_t::boolean: out << value.get<bool>(); break;
    case json::value_t::number_integer: out << value.get<std::int64_t>(); break;
    case json::value_t::number_unsigned: out << value.get<std::uint64_t>(); break;
    case json::value_t::number_float: out << value.get<double>(); break;
    case json::value_t::string: {
      const auto& s = value.get_ref<const std::string&>();
      if (LiteralBlockKeeps(s)) out << YAML::Literal;
      else if (s.find('\n') != std::string::npos || Resolve(s) != json(s)) out << YAML::DoubleQuoted;
      out << s;
      break;
    }
    case json::value_t::array:
      if (value.empty()) out << YAML::Flow;
      out << YAML::BeginSeq;
      for (const auto& item : value) Emit(out, item);
      out << YAML::EndSeq;
      break;
    case json::value_t::object:
      if (value.empty()) out << YAML::Flow;
      out << YAML::BeginMap;
      for (const auto& [key, item] : value.items()) {
        out << YAML::Key;
        if (Resolve(key) != json(key)) out << YAML::DoubleQuoted;
        out << key << YAML::Value;
        Emit(out, item);
      }
      out << YAML::EndMap;
      break;
    case json::value_t::binary:
    case json::value_t::discarded: out << YAML::Null; break;
  }
}

}  // namespace

std::string JsonToYaml(const nlohmann::ordered_json& json) {
  YAML::Emitter out;
  Emit(out, json);
  return std::string(out.c_str()) + "\n";
}

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
