// Fuzzes the Prometheus text reader (common/prometheus_text.h) with what a
// node's dcgm-exporter could send: any bytes, within small limits. What it
// accepts must respect the limits, and written out again (escaped, every
// family first) must read back to the same families and samples.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "common/prometheus_text.h"

namespace {

std::string EscapeValue(std::string_view text, bool quote) {
  std::string out;
  for (const char c : text) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else if (quote && c == '"') {
      out += "\\\"";
    } else {
      out += c;
    }
  }
  return out;
}

std::string FormatValue(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.17g", value);
  return buffer;
}

std::string Write(const septa::PrometheusExposition& exposition) {
  std::string out;
  for (const auto& family : exposition.families) {
    if (family.help) out += "# HELP " + family.name + " " + EscapeValue(*family.help, false) + "\n";
    out += "# TYPE " + family.name + " " + std::string(septa::PrometheusTypeName(family.type)) + "\n";
  }
  for (const auto& sample : exposition.samples) {
    out += sample.name + "{";
    for (const auto& label : sample.labels) out += label.name + "=\"" + EscapeValue(label.value, true) + "\",";
    out += "} " + FormatValue(sample.value);
    if (sample.timestamp_ms) out += " " + std::to_string(*sample.timestamp_ms);
    out += "\n";
  }
  return out;
}

bool SameValue(double a, double b) { return (std::isnan(a) && std::isnan(b)) || a == b; }

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const septa::PrometheusTextLimits limits{
      .max_bytes = 4096, .max_series = 64, .max_label_value_bytes = 128, .max_labels_per_series = 16};
  const auto parsed = septa::ParsePrometheusText(input, limits);
  if (!parsed.ok()) return 0;
  if (parsed->samples.size() > limits.max_series) std::abort();
  for (const auto& sample : parsed->samples) {
    if (sample.labels.size() > limits.max_labels_per_series) std::abort();
    for (const auto& label : sample.labels) {
      if (label.value.size() > limits.max_label_value_bytes) std::abort();
    }
  }
  const septa::PrometheusTextLimits roomy{
      .max_bytes = 1 << 20, .max_series = 64, .max_label_value_bytes = 128, .max_labels_per_series = 16};
  const auto again = septa::ParsePrometheusText(Write(*parsed), roomy);
  if (!again.ok()) std::abort();
  if (again->families.size() != parsed->families.size()) std::abort();
  for (std::size_t i = 0; i < parsed->families.size(); ++i) {
    const auto& a = parsed->families[i];
    const auto& b = again->families[i];
    if (a.name != b.name || a.type != b.type || a.help != b.help) std::abort();
  }
  if (again->samples.size() != parsed->samples.size()) std::abort();
  for (std::size_t i = 0; i < parsed->samples.size(); ++i) {
    const auto& a = parsed->samples[i];
    const auto& b = again->samples[i];
    if (a.name != b.name || a.labels != b.labels || !SameValue(a.value, b.value) || a.timestamp_ms != b.timestamp_ms) {
      std::abort();
    }
  }
  return 0;
}
