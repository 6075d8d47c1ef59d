// A strict reader of the Prometheus text exposition format, version 0.0.4
// (what dcgm-exporter serves on :9400, ../shared/docs/USAGE-FACTS.md §1.3,
// §1.6): `# HELP`, `# TYPE` and comment lines, samples
// `name{label="value",...} value [timestamp]`, blank lines.
//
// Hand-written, because no library in the build reads this format:
// prometheus-cpp (cmake/Dependencies.cmake) only writes it (its
// TextSerializer), and pure code may not include it anyway
// (scripts/check_layers.sh); Debian packages no C or C++ parser of it (the
// Go and Python clients' parsers are the reference). The grammar follows the
// Go reference parser (prometheus/common expfmt, TextParser), stricter where
// the format's own text is:
//  - lines end with '\n', the last one too (a body cut short, as a scrape
//    bounded in bytes is, ends without one and is refused, never half-read);
//    '\r' is no line end and is refused;
//  - names: [a-zA-Z_:][a-zA-Z0-9_:]* for metrics, [a-zA-Z_][a-zA-Z0-9_]* for
//    labels, and no label name starting with "__" (reserved);
//  - label values and HELP text are UTF-8 with the escapes \\, \" and \n
//    only (\" not in HELP); any other backslash is refused;
//  - blanks (space, tab) may stand around '{', '=', ',' and '}' and between
//    the tokens of a line, and lead or trail it; a trailing ',' closes a
//    label set;
//  - values: a decimal floating-point number ([+-], digits, '.', exponent:
//    no hex, no '_') or exactly NaN, +Inf, -Inf; timestamps: an integer of
//    milliseconds since the epoch that fits 64 bits;
//  - a TYPE is one of counter, gauge, histogram, summary, untyped; at most
//    one HELP and one TYPE per metric name, and a TYPE before that name's
//    first sample;
//  - the same series twice (the same name and the same labels, in any order,
//    a label whose value is "" counting as absent as Prometheus counts it) is
//    refused, naming both lines: which copy is right cannot be known.
// Not checked (the Go parser does not either): that a metric's lines form one
// group, and histogram/summary structure (le/quantile labels, +Inf bucket).
//
// Invalid UTF-8 anywhere is refused. Every refusal names the line (1-based):
// INVALID_ARGUMENT for malformed text, RESOURCE_EXHAUSTED when a limit is
// passed (the body's size is checked before anything is read).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace septa {

// Bounds on one exposition; every one is the caller's (a scrape of a node's
// exporter, a fuzzer). The defaults fit one dcgm-exporter of a node with 8
// GPUs, 7 MIG instances each, pods labelled on every series, with about
// 20 times room: ~30 fields × 56 instances ≈ 1,700 series of ~400 bytes.
struct PrometheusTextLimits {
  std::size_t max_bytes = 16 << 20;          // the whole body
  std::size_t max_series = 50'000;           // sample lines
  std::size_t max_label_value_bytes = 4096;  // one label value, unescaped
  std::size_t max_labels_per_series = 64;    // labels of one sample
};

enum class PrometheusType { kUntyped, kCounter, kGauge, kHistogram, kSummary };
std::string_view PrometheusTypeName(PrometheusType type);  // "counter", ...

struct PrometheusLabel {
  std::string name{};
  std::string value{};  // unescaped
  bool operator==(const PrometheusLabel&) const = default;
};

struct PrometheusSample {
  std::string name{};
  std::vector<PrometheusLabel> labels{};  // in the order written
  double value = 0;
  std::optional<std::int64_t> timestamp_ms{};
  int line = 0;  // 1-based line of the exposition

  // The value of label `name`; nullopt when the sample has no such label.
  std::optional<std::string_view> Label(std::string_view label_name) const;
};

// What HELP and TYPE lines said of one metric name.
struct PrometheusFamily {
  std::string name{};
  PrometheusType type = PrometheusType::kUntyped;
  std::optional<std::string> help{};  // unescaped
};

struct PrometheusExposition {
  std::vector<PrometheusFamily> families{};  // names with a HELP or TYPE line, first seen first
  std::vector<PrometheusSample> samples{};   // in the order written

  // The family of a sample's name: the name itself, or for a histogram's
  // `_bucket`, `_sum`, `_count` and a summary's `_sum`, `_count` the
  // declared base name. nullptr when no HELP or TYPE named it.
  const PrometheusFamily* FamilyOf(std::string_view sample_name) const;
};

Result<PrometheusExposition> ParsePrometheusText(std::string_view text, const PrometheusTextLimits& limits);

}  // namespace septa
