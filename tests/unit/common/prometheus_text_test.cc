#include "common/prometheus_text.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "tests/support/usage_facts_lines.h"

namespace septa {
namespace {

const PrometheusTextLimits kTestLimits{
    .max_bytes = 1 << 20, .max_series = 1000, .max_label_value_bytes = 256, .max_labels_per_series = 32};

PrometheusExposition MustParse(std::string_view text) {
  auto parsed = ParsePrometheusText(text, kTestLimits);
  EXPECT_TRUE(parsed.ok()) << parsed.status().ToString() << "\n" << text;
  return parsed.ok() ? *std::move(parsed) : PrometheusExposition{};
}

// The refusal's code and message, for EXPECT_EQ and HasSubstr-free checks.
Status Refusal(std::string_view text, const PrometheusTextLimits& limits = kTestLimits) {
  auto parsed = ParsePrometheusText(text, limits);
  EXPECT_FALSE(parsed.ok()) << "accepted:\n" << text;
  return parsed.status();
}

void ExpectRefused(std::string_view text, std::string_view message_part, Code code = Code::kInvalidArgument) {
  const Status status = Refusal(text);
  EXPECT_EQ(status.code(), code) << status.ToString();
  EXPECT_NE(status.message().find(message_part), std::string::npos)
      << "message \"" << status.message() << "\" lacks \"" << message_part << "\"";
}

using test::kUsageFactsLines;

TEST(commonPrometheusText, ParsesTheExporterLinesOfUsageFacts) {
  const PrometheusExposition exposition = MustParse(kUsageFactsLines);
  ASSERT_EQ(exposition.samples.size(), 5u);
  EXPECT_TRUE(exposition.families.empty());

  const PrometheusSample& readme = exposition.samples[0];
  EXPECT_EQ(readme.name, "DCGM_FI_DEV_SM_CLOCK");
  EXPECT_EQ(readme.value, 139);
  EXPECT_EQ(readme.line, 1);
  EXPECT_FALSE(readme.timestamp_ms.has_value());
  ASSERT_EQ(readme.labels.size(), 5u);
  EXPECT_EQ(readme.labels[1], (PrometheusLabel{.name = "UUID", .value = "GPU-604ac76c-d9cf-fef3-62e9-d92044ab6e52"}));
  EXPECT_EQ(readme.Label("pod"), std::optional<std::string_view>(""));
  EXPECT_EQ(readme.Label("hostname"), std::nullopt);

  const PrometheusSample& mig = exposition.samples[2];
  EXPECT_EQ(mig.Label("GPU_I_ID"), "13");
  EXPECT_EQ(mig.Label("GPU_I_PROFILE"), "1g.5gb");
  EXPECT_EQ(mig.Label("Hostname"), "ub20-a100-k8s");
  EXPECT_DOUBLE_EQ(mig.value, 0.995687);

  const PrometheusSample& fb = exposition.samples[3];
  EXPECT_EQ(fb.labels.size(), 12u);
  EXPECT_EQ(fb.Label("DCGM_FI_DRIVER_VERSION"), "580.159.04");
  EXPECT_EQ(fb.Label("pod"), "ollama-76f687f4cd-xcvvp");
  EXPECT_EQ(fb.value, 4190);
  EXPECT_EQ(fb.line, 4);

  EXPECT_DOUBLE_EQ(exposition.samples[4].value, 0.486);
  EXPECT_EQ(exposition.samples[4].Label("modelName"), "NVIDIA H100 80GB HBM3");
}

TEST(commonPrometheusText, AbbreviatedQuotesAreNotExpositionText) {
  // USAGE-FACTS §1.6 quotes PR #594's lines with their labels elided.
  ExpectRefused("DCGM_FI_DEV_GPU_UTIL{pod=\"gpu-workload-1\",...} 99\n", "line 1: expected a label name or '}'");
}

TEST(commonPrometheusText, HelpTypeCommentsAndBlankLines) {
  const PrometheusExposition exposition = MustParse(
      "# HELP DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION Total energy consumption since boot (in mJ).\n"
      "# TYPE DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION counter\n"
      "\n"
      "   \t\n"
      "# a comment, and # HELP inside it is none\n"
      "#HELP tight A HELP with no blank after '#', backslash \\\\ and line \\n feed\n"
      "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{gpu=\"0\"} 123456789\n"
      "# TYPE rpc_seconds histogram\n"
      "rpc_seconds_bucket{le=\"+Inf\"} 3\n"
      "rpc_seconds_sum 1.5\n"
      "# TYPE lat summary\n"
      "# HELP empty\n");
  ASSERT_EQ(exposition.families.size(), 5u);
  const PrometheusFamily* energy = exposition.FamilyOf("DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION");
  ASSERT_NE(energy, nullptr);
  EXPECT_EQ(energy->type, PrometheusType::kCounter);
  EXPECT_EQ(energy->help, "Total energy consumption since boot (in mJ).");
  ASSERT_NE(exposition.FamilyOf("tight"), nullptr);
  EXPECT_EQ(exposition.FamilyOf("tight")->help, "A HELP with no blank after '#', backslash \\ and line \n feed");
  EXPECT_EQ(exposition.FamilyOf("tight")->type, PrometheusType::kUntyped);
  EXPECT_EQ(exposition.FamilyOf("empty")->help, "");
  EXPECT_EQ(exposition.FamilyOf("rpc_seconds_bucket")->name, "rpc_seconds");
  EXPECT_EQ(exposition.FamilyOf("rpc_seconds_count")->type, PrometheusType::kHistogram);
  EXPECT_EQ(exposition.FamilyOf("lat_count")->name, "lat");
  EXPECT_EQ(exposition.FamilyOf("lat_bucket"), nullptr);  // a summary has no buckets
  EXPECT_EQ(exposition.FamilyOf("unknown"), nullptr);
  ASSERT_EQ(exposition.samples.size(), 3u);
  EXPECT_EQ(exposition.samples[0].line, 7);
  EXPECT_EQ(PrometheusTypeName(PrometheusType::kSummary), "summary");
}

TEST(commonPrometheusText, LabelValueEscapesAreUnescaped) {
  const PrometheusExposition exposition =
      MustParse("m{path=\"C:\\\\dir\",quote=\"say \\\"hi\\\"\",nl=\"a\\nb\",utf8=\"Größe ✓\"} 1\n");
  ASSERT_EQ(exposition.samples.size(), 1u);
  EXPECT_EQ(exposition.samples[0].Label("path"), "C:\\dir");
  EXPECT_EQ(exposition.samples[0].Label("quote"), "say \"hi\"");
  EXPECT_EQ(exposition.samples[0].Label("nl"), "a\nb");
  EXPECT_EQ(exposition.samples[0].Label("utf8"), "Größe ✓");
}

TEST(commonPrometheusText, BlanksAroundTokensAndATrailingComma) {
  const PrometheusExposition exposition = MustParse(
      "  m { a = \"1\" ,\tb=\"2\", } \t 5 \t 1700000000000  \n"
      "n{}7\n"
      "o{a=\"x\"}8\n");
  ASSERT_EQ(exposition.samples.size(), 3u);
  EXPECT_EQ(exposition.samples[0].labels.size(), 2u);
  EXPECT_EQ(exposition.samples[0].Label("b"), "2");
  EXPECT_EQ(exposition.samples[0].timestamp_ms, 1700000000000);
  EXPECT_EQ(exposition.samples[1].value, 7);
  EXPECT_TRUE(exposition.samples[1].labels.empty());
  EXPECT_EQ(exposition.samples[2].value, 8);
}

TEST(commonPrometheusText, SpecialValuesAndTimestamps) {
  const PrometheusExposition exposition = MustParse(
      "a NaN\n"
      "b +Inf\n"
      "c -Inf\n"
      "d -1.5e-3 -42\n"
      "e +.5 +7\n"
      "f 9223372036854775794\n"
      "g 1E3 9223372036854775807\n");
  ASSERT_EQ(exposition.samples.size(), 7u);
  EXPECT_TRUE(std::isnan(exposition.samples[0].value));
  EXPECT_EQ(exposition.samples[1].value, INFINITY);
  EXPECT_EQ(exposition.samples[2].value, -INFINITY);
  EXPECT_DOUBLE_EQ(exposition.samples[3].value, -0.0015);
  EXPECT_EQ(exposition.samples[3].timestamp_ms, -42);
  EXPECT_DOUBLE_EQ(exposition.samples[4].value, 0.5);
  EXPECT_EQ(exposition.samples[4].timestamp_ms, 7);
  EXPECT_DOUBLE_EQ(exposition.samples[5].value, 9223372036854775794.0);  // DCGM's "blank" sentinel
  EXPECT_EQ(exposition.samples[6].value, 1000);
  EXPECT_EQ(exposition.samples[6].timestamp_ms, INT64_MAX);
}

TEST(commonPrometheusText, RefusesValuesAndTimestampsOutsideTheGrammar) {
  for (const char* value : {"inf", "Inf", "nan", "NAN", "infinity", "0x10", "1_000", "1e", "1e+", ".", "+", "1.2.3",
                            "--1", "1e999", "12abc"}) {
    ExpectRefused(std::string("m ") + value + "\n", "line 1: bad value");
  }
  for (const char* timestamp : {"1.5", "1e3", "+-5", "-", "9223372036854775808", "12x"}) {
    ExpectRefused(std::string("m 1 ") + timestamp + "\n", "line 1: bad timestamp");
  }
  ExpectRefused("m 1 2 3\n", "line 1: expected the end of the line after the timestamp");
  ExpectRefused("m\n", "line 1: expected a value");
  ExpectRefused("m{a=\"b\"}\n", "line 1: expected a value");
}

TEST(commonPrometheusText, RefusesMalformedLinesNamingTheLine) {
  ExpectRefused("ok 1\n9lives 1\n", "line 2: expected a metric name");
  ExpectRefused("ok 1\nm-x 1\n", "line 2: expected a blank, '{' or a value after the metric name");
  ExpectRefused("m{9=\"a\"} 1\n", "line 1: expected a label name or '}'");
  ExpectRefused("m{__name__=\"a\"} 1\n", "line 1: label name __name__ is reserved");
  ExpectRefused("m{a=\"1\",a=\"2\"} 1\n", "line 1: label a twice");
  ExpectRefused("m{a\"1\"} 1\n", "line 1: expected '=' after label a");
  ExpectRefused("m{a=1} 1\n", "line 1: expected '\"' opening the value of label a");
  ExpectRefused("m{a=\"1} 1\n", "line 1: the value of label a is not closed");
  ExpectRefused("m{a=\"1\" b=\"2\"} 1\n", "line 1: expected ',' or '}' after a label value");
  ExpectRefused("m{a=\"\\t\"} 1\n", "line 1: invalid escape sequence in the value of label a");
  ExpectRefused("m{a=\"x\\\"} 1\n", "line 1: the value of label a is not closed");
  ExpectRefused("m{,} 1\n", "line 1: expected a label name or '}'");
  ExpectRefused("# HELP m bad \\t escape\n", "line 1: invalid escape sequence in HELP text");
  ExpectRefused("# HELP\n", "line 1: expected a blank and a metric name after HELP");
  ExpectRefused("# TYPE 1m gauge\n", "line 1: expected a metric name");
  ExpectRefused("# TYPE m gauge extra\n", "line 1: expected the end of the TYPE line");
  ExpectRefused("# TYPE m Gauge\n", "line 1: unknown metric type \"Gauge\"");
  ExpectRefused("# TYPE m gauge\n# TYPE m counter\n", "line 2: a second TYPE line for m");
  ExpectRefused("# HELP m a\n# HELP m b\n", "line 2: a second HELP line for m");
  ExpectRefused("m 1\n# TYPE m gauge\n", "line 2: TYPE line for m after its first sample (line 1)");
}

TEST(commonPrometheusText, RefusesLineEndsThatAreNotLineFeeds) {
  ExpectRefused("a 1\nb 2", "line 2: the last line does not end with a line feed");
  ExpectRefused("a 1\r\n", "line 1: bad value");
  ExpectRefused("# comment\r\na 1\r\n", "line 2: bad value");
  EXPECT_TRUE(MustParse("").samples.empty());
  EXPECT_TRUE(MustParse("\n\n").samples.empty());
}

TEST(commonPrometheusText, RefusesInvalidUtf8NamingTheLine) {
  ExpectRefused("a 1\nm{a=\"\xff\"} 1\n", "line 2: not valid UTF-8");
  ExpectRefused("a 1\nb 2\n# comment \xc3\x28\n", "line 3: not valid UTF-8");
  ExpectRefused("# HELP m over\xed\xa0\x80long surrogate\n", "line 1: not valid UTF-8");
}

TEST(commonPrometheusText, RefusesADuplicateSeriesNamingBothLines) {
  ExpectRefused("m{a=\"1\",b=\"2\"} 1\nm{a=\"2\"} 1\nm{b=\"2\",a=\"1\"} 3\n",
                "line 3: duplicate series m (the same name and labels as line 1)");
  // A label whose value is empty is no label, as Prometheus stores it.
  ExpectRefused("m{gpu=\"0\",pod=\"\"} 1\nm{gpu=\"0\"} 2\n", "line 2: duplicate series m");
  ExpectRefused("m 1\nm 1 1000\n", "line 2: duplicate series m");
  // Values that only look alike across boundaries are different series.
  const PrometheusExposition distinct = MustParse("m{a=\"1:b\",c=\"\"} 1\nm{a=\"1\",b=\"\"} 1\nn{a=\"1\"} 1\n");
  EXPECT_EQ(distinct.samples.size(), 3u);
}

TEST(commonPrometheusText, LimitsAreResourceExhaustedNamingTheLine) {
  const std::string two_series = "a{x=\"12345678\"} 1\nb{x=\"1\",y=\"2\"} 2\n";
  PrometheusTextLimits limits = kTestLimits;

  limits.max_bytes = two_series.size();
  EXPECT_TRUE(ParsePrometheusText(two_series, limits).ok());
  limits.max_bytes = two_series.size() - 1;
  Status status = Refusal(two_series, limits);
  EXPECT_EQ(status.code(), Code::kResourceExhausted);
  EXPECT_EQ(status.message(), "exposition of 35 bytes exceeds max_bytes 34");

  limits = kTestLimits;
  limits.max_series = 2;
  EXPECT_TRUE(ParsePrometheusText(two_series, limits).ok());
  limits.max_series = 1;
  status = Refusal(two_series, limits);
  EXPECT_EQ(status.code(), Code::kResourceExhausted);
  EXPECT_EQ(status.message(), "line 2: more than max_series 1 series");

  limits = kTestLimits;
  limits.max_label_value_bytes = 8;
  EXPECT_TRUE(ParsePrometheusText(two_series, limits).ok());
  limits.max_label_value_bytes = 7;
  status = Refusal(two_series, limits);
  EXPECT_EQ(status.code(), Code::kResourceExhausted);
  EXPECT_EQ(status.message(), "line 1: the value of label x is longer than max_label_value_bytes 7");
  // Counted unescaped: "\\\\" is one byte.
  EXPECT_TRUE(ParsePrometheusText("a{x=\"\\\\\\\\\\\\\\\\\"} 1\n", limits).ok());

  limits = kTestLimits;
  limits.max_labels_per_series = 2;
  EXPECT_TRUE(ParsePrometheusText(two_series, limits).ok());
  limits.max_labels_per_series = 1;
  status = Refusal(two_series, limits);
  EXPECT_EQ(status.code(), Code::kResourceExhausted);
  EXPECT_EQ(status.message(), "line 2: more than max_labels_per_series 1 labels on b");
}

TEST(commonPrometheusText, ErrorMessagesEscapeWhatTheBodySent) {
  const Status status = Refusal("m \x1b[31mred\n");
  EXPECT_EQ(status.message().find('\x1b'), std::string::npos) << status.message();
  EXPECT_NE(status.message().find("\\u001b"), std::string::npos) << status.message();
}

}  // namespace
}  // namespace septa
