// How septactl prints results: an aligned table for people, or the
// resource's protobuf JSON mapping (snake_case names as in the .proto), or
// YAML derived from that same JSON so that the two always agree.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <google/protobuf/message.h>

#include "common/status.h"

namespace septa::cli {

// kCsv: the table as RFC 4180 CSV, headers in lower case with _ for spaces.
enum class OutputFormat { kTable, kJson, kYaml, kCsv };

// "table", "json", "yaml" or "csv".
Result<OutputFormat> ParseOutputFormat(std::string_view text);

struct Table {
  std::vector<std::string> headers;
  std::vector<std::vector<std::string>> rows;
};

// Columns separated by three spaces, each as wide as its widest cell; no
// trailing blanks. Headers only when there are no rows.
std::string RenderTable(const Table& table);

// Pretty-printed JSON (two-space indent), every field present, one trailing
// newline.
std::string RenderJson(const google::protobuf::Message& message);

// The same document as RenderJson in YAML block style.
std::string RenderYaml(const google::protobuf::Message& message);

// `message` as JSON or YAML, or `table` as a table.
std::string Render(OutputFormat format, const google::protobuf::Message& message, const Table& table);

}  // namespace septa::cli
