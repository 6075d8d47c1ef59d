#include "common/prometheus_text.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <string>
#include <unordered_map>
#include <utility>

#include "common/text.h"

namespace septa {

std::string_view PrometheusTypeName(PrometheusType type) {
  switch (type) {
    case PrometheusType::kCounter: return "counter";
    case PrometheusType::kGauge: return "gauge";
    case PrometheusType::kHistogram: return "histogram";
    case PrometheusType::kSummary: return "summary";
    case PrometheusType::kUntyped: break;
  }
  return "untyped";
}

std::optional<std::string_view> PrometheusSample::Label(std::string_view label_name) const {
  for (const auto& label : labels) {
    if (label.name == label_name) return std::string_view(label.value);
  }
  return std::nullopt;
}

const PrometheusFamily* PrometheusExposition::FamilyOf(std::string_view sample_name) const {
  const auto find = [&](std::string_view name) -> const PrometheusFamily* {
    for (const auto& family : families) {
      if (family.name == name) return &family;
    }
    return nullptr;
  };
  if (const PrometheusFamily* exact = find(sample_name)) return exact;
  for (const std::string_view suffix : {"_bucket", "_sum", "_count"}) {
    if (!sample_name.ends_with(suffix)) continue;
    const PrometheusFamily* base = find(sample_name.substr(0, sample_name.size() - suffix.size()));
    if (base == nullptr) continue;
    if (base->type == PrometheusType::kHistogram) return base;
    if (base->type == PrometheusType::kSummary && suffix != "_bucket") return base;
  }
  return nullptr;
}

// File-local, in a namespace of its own: unity builds join this file with
// the folder's others, which have helpers of the same names.
namespace prometheus_text_internal {
namespace {

bool IsBlank(char c) { return c == ' ' || c == '\t'; }
bool IsAsciiLetter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsMetricNameStart(char c) { return IsAsciiLetter(c) || c == '_' || c == ':'; }
bool IsMetricNameChar(char c) { return IsMetricNameStart(c) || IsDigit(c); }
bool IsLabelNameStart(char c) { return IsAsciiLetter(c) || c == '_'; }
bool IsLabelNameChar(char c) { return IsLabelNameStart(c) || IsDigit(c); }

// A printable excerpt of what the text has at a refusal: at most 40 bytes,
// control characters escaped, so that a hostile body cannot write to a log
// or terminal through an error message.
std::string Excerpt(std::string_view text) {
  constexpr std::size_t kMax = 40;
  std::string out = EscapeControlCharacters(text.substr(0, kMax));
  if (text.size() > kMax) out += "...";
  return out;
}

// The strict decimal form; std::from_chars alone would also take "inf",
// "nan", "infinity" in any case, hex digits after a "0x" and no leading '+'.
bool IsDecimalFloat(std::string_view s) {
  std::size_t i = 0;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
  std::size_t digits = 0;
  while (i < s.size() && IsDigit(s[i])) ++i, ++digits;
  if (i < s.size() && s[i] == '.') {
    ++i;
    while (i < s.size() && IsDigit(s[i])) ++i, ++digits;
  }
  if (digits == 0) return false;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
    std::size_t exponent_digits = 0;
    while (i < s.size() && IsDigit(s[i])) ++i, ++exponent_digits;
    if (exponent_digits == 0) return false;
  }
  return i == s.size();
}

std::optional<double> ParseValue(std::string_view token) {
  if (token == "NaN") return std::numeric_limits<double>::quiet_NaN();
  if (token == "+Inf") return std::numeric_limits<double>::infinity();
  if (token == "-Inf") return -std::numeric_limits<double>::infinity();
  if (!IsDecimalFloat(token)) return std::nullopt;
  const std::string_view digits = token.front() == '+' ? token.substr(1) : token;
  double value = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  // Out of a double's range: from_chars says so; Go's ParseFloat would give
  // ±Inf with an error, which its parser refuses too.
  if (ec != std::errc() || end != digits.data() + digits.size()) return std::nullopt;
  return value;
}

std::optional<std::int64_t> ParseTimestamp(std::string_view token) {
  std::string_view digits = token;
  std::string_view unsigned_digits = token;
  if (!token.empty() && token.front() == '+') digits = unsigned_digits = token.substr(1);
  if (!token.empty() && token.front() == '-') unsigned_digits = token.substr(1);
  if (unsigned_digits.empty() || !std::all_of(unsigned_digits.begin(), unsigned_digits.end(), IsDigit)) {
    return std::nullopt;
  }
  std::int64_t value = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (ec != std::errc() || end != digits.data() + digits.size()) return std::nullopt;
  return value;
}

std::optional<PrometheusType> ParseTypeName(std::string_view token) {
  if (token == "counter") return PrometheusType::kCounter;
  if (token == "gauge") return PrometheusType::kGauge;
  if (token == "histogram") return PrometheusType::kHistogram;
  if (token == "summary") return PrometheusType::kSummary;
  if (token == "untyped") return PrometheusType::kUntyped;
  return std::nullopt;
}

// The series' identity: its name and its labels with a value, sorted, each
// piece length-prefixed so that no value can imitate a boundary.
std::string SeriesKey(const PrometheusSample& sample) {
  std::vector<const PrometheusLabel*> labels;
  for (const auto& label : sample.labels) {
    if (!label.value.empty()) labels.push_back(&label);
  }
  std::sort(labels.begin(), labels.end(), [](const auto* a, const auto* b) { return a->name < b->name; });
  std::string key = std::to_string(sample.name.size()) + ':' + sample.name;
  for (const auto* label : labels) {
    key += std::to_string(label->name.size()) + ':' + label->name;
    key += std::to_string(label->value.size()) + ':' + label->value;
  }
  return key;
}

// What the lines so far said of one metric name.
struct FamilyState {
  int declared = -1;  // index into PrometheusExposition::families once HELP or TYPE named it
  bool has_type = false;
  int first_sample_line = 0;
};

class TextParser {
 public:
  TextParser(std::string_view text, const PrometheusTextLimits& limits) : text_(text), limits_(limits) {}

  Result<PrometheusExposition> Parse() {
    if (text_.size() > limits_.max_bytes) {
      return ResourceExhausted("exposition of " + std::to_string(text_.size()) + " bytes exceeds max_bytes " +
                               std::to_string(limits_.max_bytes));
    }
    const bool valid_utf8 = IsValidUtf8(text_);
    std::size_t begin = 0;
    while (begin < text_.size()) {
      ++line_number_;
      const std::size_t end = text_.find('\n', begin);
      if (end == std::string_view::npos) {
        return Error("the last line does not end with a line feed (a body cut short?)");
      }
      line_ = text_.substr(begin, end - begin);
      pos_ = 0;
      if (!valid_utf8 && !IsValidUtf8(line_)) return Error("not valid UTF-8");
      SEPTA_RETURN_IF_ERROR(ParseLine());
      begin = end + 1;
    }
    return std::move(out_);
  }

 private:
  Status Error(const std::string& what) const {
    return InvalidArgument("line " + std::to_string(line_number_) + ": " + what);
  }
  Status Exhausted(const std::string& what) const {
    return ResourceExhausted("line " + std::to_string(line_number_) + ": " + what);
  }
  Status Unexpected(const std::string& expected) const {
    if (pos_ >= line_.size()) return Error("expected " + expected + ", found the end of the line");
    return Error("expected " + expected + " at column " + std::to_string(pos_ + 1) + ", found \"" +
                 Excerpt(line_.substr(pos_)) + "\"");
  }

  bool AtEnd() const { return pos_ >= line_.size(); }
  char Peek() const { return AtEnd() ? '\0' : line_[pos_]; }
  void SkipBlanks() {
    while (!AtEnd() && IsBlank(line_[pos_])) ++pos_;
  }
  std::string_view Token() {  // up to the next blank or the end of the line
    const std::size_t start = pos_;
    while (!AtEnd() && !IsBlank(line_[pos_])) ++pos_;
    return line_.substr(start, pos_ - start);
  }

  Result<std::string> MetricName() {
    if (!IsMetricNameStart(Peek())) return Unexpected("a metric name");
    const std::size_t start = pos_;
    while (!AtEnd() && IsMetricNameChar(line_[pos_])) ++pos_;
    return std::string(line_.substr(start, pos_ - start));
  }

  Status ParseLine() {
    SkipBlanks();
    if (AtEnd()) return Status::Ok();
    if (Peek() == '#') return ParseHash();
    return ParseSample();
  }

  // "# HELP name text", "# TYPE name type", or a comment.
  Status ParseHash() {
    ++pos_;
    SkipBlanks();
    const std::string_view keyword = Token();
    if (keyword != "HELP" && keyword != "TYPE") return Status::Ok();  // a comment
    if (!IsBlank(Peek())) return Unexpected("a blank and a metric name after " + std::string(keyword));
    SkipBlanks();
    SEPTA_ASSIGN_OR_RETURN(std::string name, MetricName());
    if (!AtEnd() && !IsBlank(Peek())) return Unexpected("a blank after the metric name");
    FamilyState& family = family_state_[name];
    if (family.declared < 0) {
      family.declared = static_cast<int>(out_.families.size());
      out_.families.push_back(PrometheusFamily{.name = name, .type = PrometheusType::kUntyped, .help = std::nullopt});
    }
    PrometheusFamily& declared = out_.families[static_cast<std::size_t>(family.declared)];
    if (keyword == "HELP") {
      if (declared.help) return Error("a second HELP line for " + name);
      SkipBlanks();
      SEPTA_ASSIGN_OR_RETURN(declared.help, HelpText());
      return Status::Ok();
    }
    if (family.has_type) return Error("a second TYPE line for " + name);
    if (family.first_sample_line != 0) {
      return Error("TYPE line for " + name + " after its first sample (line " +
                   std::to_string(family.first_sample_line) + ")");
    }
    SkipBlanks();
    const std::string_view type_token = Token();
    const auto type = ParseTypeName(type_token);
    if (!type) {
      return Error("unknown metric type \"" + Excerpt(type_token) +
                   "\" (counter, gauge, histogram, summary or untyped)");
    }
    SkipBlanks();
    if (!AtEnd()) return Unexpected("the end of the TYPE line");
    declared.type = *type;
    family.has_type = true;
    return Status::Ok();
  }

  Result<std::string> HelpText() {
    std::string text;
    while (!AtEnd()) {
      const char c = line_[pos_++];
      if (c != '\\') {
        text += c;
        continue;
      }
      const char escaped = Peek();
      if (escaped == '\\') {
        text += '\\';
      } else if (escaped == 'n') {
        text += '\n';
      } else {
        return Error("invalid escape sequence in HELP text at column " + std::to_string(pos_) + " (only \\\\ and \\n)");
      }
      ++pos_;
    }
    return text;
  }

  Status ParseSample() {
    if (out_.samples.size() >= limits_.max_series) {
      return Exhausted("more than max_series " + std::to_string(limits_.max_series) + " series");
    }
    PrometheusSample sample;
    sample.line = line_number_;
    SEPTA_ASSIGN_OR_RETURN(sample.name, MetricName());
    SkipBlanks();
    if (Peek() == '{') {
      ++pos_;
      SEPTA_RETURN_IF_ERROR(LabelSet(sample));
      SkipBlanks();
    } else if (!AtEnd() && !IsBlank(line_[pos_ - 1])) {
      return Unexpected("a blank, '{' or a value after the metric name");
    }
    const std::string_view value_token = Token();
    if (value_token.empty()) return Unexpected("a value");
    const auto value = ParseValue(value_token);
    if (!value) {
      return Error("bad value \"" + Excerpt(value_token) + "\" (a decimal number, NaN, +Inf or -Inf) for " +
                   sample.name);
    }
    sample.value = *value;
    SkipBlanks();
    if (!AtEnd()) {
      const std::string_view timestamp_token = Token();
      const auto timestamp = ParseTimestamp(timestamp_token);
      if (!timestamp) {
        return Error("bad timestamp \"" + Excerpt(timestamp_token) + "\" (integer milliseconds) for " + sample.name);
      }
      sample.timestamp_ms = *timestamp;
      SkipBlanks();
      if (!AtEnd()) return Unexpected("the end of the line after the timestamp");
    }
    const auto [seen, inserted] = series_lines_.try_emplace(SeriesKey(sample), line_number_);
    if (!inserted) {
      return Error("duplicate series " + sample.name + " (the same name and labels as line " +
                   std::to_string(seen->second) + ")");
    }
    FamilyState& family = family_state_[sample.name];
    if (family.first_sample_line == 0) family.first_sample_line = line_number_;
    out_.samples.push_back(std::move(sample));
    return Status::Ok();
  }

  // After '{': labels up to and including '}'.
  Status LabelSet(PrometheusSample& sample) {
    SkipBlanks();
    while (Peek() != '}') {
      if (!IsLabelNameStart(Peek())) return Unexpected("a label name or '}'");
      const std::size_t start = pos_;
      while (!AtEnd() && IsLabelNameChar(line_[pos_])) ++pos_;
      std::string name(line_.substr(start, pos_ - start));
      if (name.starts_with("__")) return Error("label name " + name + " is reserved (starts with \"__\")");
      for (const auto& label : sample.labels) {
        if (label.name == name) return Error("label " + name + " twice in one series of " + sample.name);
      }
      if (sample.labels.size() >= limits_.max_labels_per_series) {
        return Exhausted("more than max_labels_per_series " + std::to_string(limits_.max_labels_per_series) +
                         " labels on " + sample.name);
      }
      SkipBlanks();
      if (Peek() != '=') return Unexpected("'=' after label " + name);
      ++pos_;
      SkipBlanks();
      if (Peek() != '"') return Unexpected("'\"' opening the value of label " + name);
      ++pos_;
      SEPTA_ASSIGN_OR_RETURN(std::string value, LabelValue(name));
      sample.labels.push_back(PrometheusLabel{.name = std::move(name), .value = std::move(value)});
      SkipBlanks();
      if (Peek() == ',') {
        ++pos_;
        SkipBlanks();
      } else if (Peek() != '}') {
        return Unexpected("',' or '}' after a label value");
      }
    }
    ++pos_;  // '}'
    return Status::Ok();
  }

  // After the opening '"': the value up to and including the closing '"'.
  Result<std::string> LabelValue(const std::string& name) {
    std::string value;
    while (true) {
      if (AtEnd()) return Error("the value of label " + name + " is not closed with '\"'");
      const char c = line_[pos_++];
      if (c == '"') break;
      if (c == '\\') {
        const char escaped = Peek();
        if (escaped == '\\' || escaped == '"') {
          value += escaped;
        } else if (escaped == 'n') {
          value += '\n';
        } else {
          return Error("invalid escape sequence in the value of label " + name + " at column " + std::to_string(pos_) +
                       " (only \\\\, \\\" and \\n)");
        }
        ++pos_;
      } else {
        value += c;
      }
      if (value.size() > limits_.max_label_value_bytes) {
        return Exhausted("the value of label " + name + " is longer than max_label_value_bytes " +
                         std::to_string(limits_.max_label_value_bytes));
      }
    }
    return value;
  }

  std::string_view text_;
  const PrometheusTextLimits& limits_;
  std::string_view line_;
  std::size_t pos_ = 0;
  int line_number_ = 0;
  PrometheusExposition out_;
  std::unordered_map<std::string, FamilyState> family_state_;
  std::unordered_map<std::string, int> series_lines_;
};

}  // namespace
}  // namespace prometheus_text_internal

Result<PrometheusExposition> ParsePrometheusText(std::string_view text, const PrometheusTextLimits& limits) {
  return prometheus_text_internal::TextParser(text, limits).Parse();
}

}  // namespace septa
