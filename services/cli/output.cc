#include "services/cli/output.h"

#include <google/protobuf/util/json_util.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <nlohmann/json.hpp>

#include "services/core/validation.h"

namespace septa::cli {

namespace {

// Ordered, so that fields keep the order of the .proto.
using Json = nlohmann::ordered_json;

Json ToJsonDocument(const google::protobuf::Message& message) {
  google::protobuf::util::JsonPrintOptions options;
  options.preserve_proto_field_names = true;
  options.always_print_primitive_fields = true;
  std::string text;
  // Printing a well-formed message only fails on an invalid Any, which the
  // septa API does not return.
  (void)google::protobuf::util::MessageToJsonString(message, &text, options);
  return Json::parse(text);
}

// A string that YAML would read back as a boolean or a number ("true",
// "123", "off") must be quoted to stay a string.
bool NeedsQuotes(const std::string& text) {
  const YAML::Node plain(text);
  bool as_bool = false;
  double as_number = 0;
  return YAML::convert<bool>::decode(plain, as_bool) || YAML::convert<double>::decode(plain, as_number);
}

void Emit(YAML::Emitter& out, const Json& value) {
  switch (value.type()) {
    case Json::value_t::object:
      if (value.empty()) out << YAML::Flow;
      out << YAML::BeginMap;
      for (const auto& [key, item] : value.items()) {
        out << YAML::Key << key << YAML::Value;
        Emit(out, item);
      }
      out << YAML::EndMap;
      break;
    case Json::value_t::array:
      if (value.empty()) out << YAML::Flow;
      out << YAML::BeginSeq;
      for (const auto& item : value) Emit(out, item);
      out << YAML::EndSeq;
      break;
    case Json::value_t::string: {
      const auto& text = value.get_ref<const std::string&>();
      // Double quotes also for text with control characters: RenderYaml
      // escapes what the emitter leaves, and only there do escapes work.
      if (NeedsQuotes(text) || core::EscapeControlCharacters(text) != text) out << YAML::DoubleQuoted;
      out << text;
      break;
    }
    case Json::value_t::boolean: out << value.get<bool>(); break;
    case Json::value_t::null: out << YAML::Null; break;
    default:  // numbers, printed as JSON prints them
      out << value.dump();
      break;
  }
}

}  // namespace

Result<OutputFormat> ParseOutputFormat(std::string_view text) {
  if (text == "table") return OutputFormat::kTable;
  if (text == "json") return OutputFormat::kJson;
  if (text == "yaml") return OutputFormat::kYaml;
  if (text == "csv") return OutputFormat::kCsv;
  return InvalidArgument("output format must be table, json, yaml or csv, not \"" + std::string(text) + "\"");
}

std::string RenderTable(const Table& unescaped) {
  // Cells hold what tenants wrote: shown, never obeyed by the terminal.
  Table table = unescaped;
  for (auto& row : table.rows) {
    for (auto& cell : row) cell = core::EscapeControlCharacters(cell);
  }
  std::vector<std::size_t> widths(table.headers.size(), 0);
  auto widen = [&widths](const std::vector<std::string>& cells) {
    for (std::size_t i = 0; i < cells.size() && i < widths.size(); ++i)
      widths[i] = std::max(widths[i], cells[i].size());
  };
  widen(table.headers);
  for (const auto& row : table.rows) widen(row);

  std::string out;
  auto line = [&](const std::vector<std::string>& cells) {
    std::string text;
    for (std::size_t i = 0; i < widths.size(); ++i) {
      const std::string& cell = i < cells.size() ? cells[i] : std::string();
      text += cell;
      if (i + 1 < widths.size()) text += std::string(widths[i] - cell.size() + 3, ' ');
    }
    text.erase(text.find_last_not_of(' ') + 1);
    out += text + "\n";
  };
  line(table.headers);
  for (const auto& row : table.rows) line(row);
  return out;
}

// nlohmann escapes C0 controls; what it leaves (DEL, C1, bidi controls) can
// only be inside strings, where the \uXXXX escapes stand for the same text.
std::string RenderJson(const google::protobuf::Message& message) {
  return core::EscapeControlCharacters(ToJsonDocument(message).dump(2), /*keep_newlines=*/true) + "\n";
}

std::string RenderYaml(const google::protobuf::Message& message) {
  YAML::Emitter out;
  Emit(out, ToJsonDocument(message));
  return core::EscapeControlCharacters(out.c_str(), /*keep_newlines=*/true) + "\n";
}

// RFC 4180: a cell with a comma, a quote or a line break is quoted, its
// quotes doubled; lines end with CRLF.
std::string RenderCsv(const Table& table) {
  const auto cell = [](std::string text) {
    text = core::EscapeControlCharacters(text);
    if (text.find_first_of(",\"") == std::string::npos) return text;
    std::string quoted = "\"";
    for (const char c : text) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
    return quoted + "\"";
  };
  const auto line = [&](const std::vector<std::string>& cells) {
    std::string text;
    for (std::size_t i = 0; i < cells.size(); ++i) text += (i > 0 ? "," : "") + cell(cells[i]);
    return text + "\r\n";
  };
  std::vector<std::string> headers;
  for (std::string header : table.headers) {
    std::transform(header.begin(), header.end(), header.begin(),
                   [](unsigned char c) { return c == ' ' ? '_' : static_cast<char>(std::tolower(c)); });
    headers.push_back(std::move(header));
  }
  std::string out = line(headers);
  for (const auto& row : table.rows) out += line(row);
  return out;
}

std::string Render(OutputFormat format, const google::protobuf::Message& message, const Table& table) {
  switch (format) {
    case OutputFormat::kJson: return RenderJson(message);
    case OutputFormat::kYaml: return RenderYaml(message);
    case OutputFormat::kCsv: return RenderCsv(table);
    case OutputFormat::kTable: break;
  }
  return RenderTable(table);
}

}  // namespace septa::cli
