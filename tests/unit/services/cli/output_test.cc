#include "services/cli/output.h"

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "septa/v1/tenant.pb.h"
#include "services/cli/views.h"

namespace septa::cli {
namespace {

v1::Tenant Acme() {
  v1::Tenant t;
  t.set_name("acme");
  t.set_display_name("Acme Corp");
  t.set_trust_tier("shared");
  t.set_state(v1::Tenant::ACTIVE);
  (*t.mutable_labels())["team"] = "ml";
  (*t.mutable_labels())["gpu"] = "true";   // must stay a string in YAML
  (*t.mutable_labels())["cost"] = "1234";  // likewise
  t.mutable_create_time()->set_seconds(1'790'000'000);
  t.mutable_create_time()->set_nanos(500);
  t.set_etag("e1");
  return t;
}

// nlohmann from a YAML document, scalars as YAML typed them.
nlohmann::json FromYaml(const YAML::Node& node) {
  if (node.IsMap()) {
    nlohmann::json object = nlohmann::json::object();
    for (const auto& item : node) object[item.first.Scalar()] = FromYaml(item.second);
    return object;
  }
  if (node.IsSequence()) {
    nlohmann::json array = nlohmann::json::array();
    for (const auto& item : node) array.push_back(FromYaml(item));
    return array;
  }
  bool flag = false;
  if (node.Tag() != "!" && YAML::convert<bool>::decode(node, flag)) return flag;
  return node.Scalar();
}

TEST(Output, ParsesFormats) {
  EXPECT_EQ(*ParseOutputFormat("table"), OutputFormat::kTable);
  EXPECT_EQ(*ParseOutputFormat("json"), OutputFormat::kJson);
  EXPECT_EQ(*ParseOutputFormat("yaml"), OutputFormat::kYaml);
  EXPECT_EQ(*ParseOutputFormat("csv"), OutputFormat::kCsv);
  EXPECT_EQ(ParseOutputFormat("xml").status().code(), Code::kInvalidArgument);
}

TEST(Output, TableAlignsColumnsWithoutTrailingBlanks) {
  const Table table{{"NAME", "TIER", "STATE"}, {{"acme", "shared", "ACTIVE"}, {"b", "exclusive", ""}}};
  EXPECT_EQ(RenderTable(table),
            "NAME   TIER        STATE\n"
            "acme   shared      ACTIVE\n"
            "b      exclusive\n");
}

TEST(Output, CsvQuotesWhatNeedsItAndNamesColumnsForPrograms) {
  const Table table{{"VCLUSTER", "COST", "NOTE"}, {{"train", "0.06", "a, \"quoted\" note"}, {"dev", "1", ""}}};
  EXPECT_EQ(Render(OutputFormat::kCsv, v1::Tenant(), table),
            "vcluster,cost,note\r\n"
            "train,0.06,\"a, \"\"quoted\"\" note\"\r\n"
            "dev,1,\r\n");
}

TEST(Output, UsageTableShowsTheGroupedDimensionsAndFullPrecisionForCsv) {
  v1::UsageReport report;
  report.set_currency("USD");
  v1::UsageItem* item = report.add_items();
  item->set_vcluster("train");
  item->set_allocated_gpu_hours(1.0 / 60);
  item->set_used_gpu_hours(0.5 / 60);
  item->set_efficiency(0.5);
  item->set_cost(0.06);
  const Table table = UsageTable(report, false);
  EXPECT_EQ(table.headers,
            (std::vector<std::string>{"START", "END", "VCLUSTER", "ALLOCATED GPU HOURS", "USED GPU HOURS",
                                      "WASTE GPU HOURS", "EFFICIENCY", "COVERAGE", "COST", "CURRENCY"}));
  EXPECT_EQ(table.rows.at(0).at(2), "train");
  EXPECT_EQ(table.rows.at(0).at(3), "0.017");
  EXPECT_EQ(table.rows.at(0).at(8), "0.06");
  EXPECT_EQ(UsageTable(report, true).rows.at(0).at(3), "0.0166666666667");
  v1::UsageReport unmeasured = report;
  unmeasured.mutable_items(0)->clear_efficiency();
  EXPECT_EQ(UsageTable(unmeasured, false).rows.at(0).at(6), "-");
}

TEST(Output, TableWithoutRowsIsTheHeader) { EXPECT_EQ(RenderTable({{"ID", "ROLE"}, {}}), "ID   ROLE\n"); }

TEST(Output, TenantTableShowsLabelsSortedAndTimeToTheSecond) {
  const auto table = TenantTable(AsList(Acme()));
  ASSERT_EQ(table.rows.size(), 1u);
  EXPECT_EQ(table.headers, (std::vector<std::string>{"NAME", "DISPLAY NAME", "TIER", "STATE", "LABELS", "CREATED",
                                                     "ETAG", "QUOTA (USED/LIMIT)"}));
  EXPECT_EQ(table.rows[0],
            (std::vector<std::string>{"acme", "Acme Corp", "shared", "ACTIVE", "cost=1234,gpu=true,team=ml",
                                      "2026-09-21T14:13:20Z", "e1", "unlimited"}));
}

TEST(Output, TenantTableShowsEachBoundedQuantityWithItsUsage) {
  v1::Tenant t = Acme();
  t.mutable_quota()->set_gpu_milli(4000);
  t.mutable_quota()->set_vclusters(0);
  EXPECT_EQ(TenantTable(AsList(t)).rows[0].back(), "gpus 4.000, vclusters 0");  // a list: no usage
  t.mutable_quota_usage()->set_gpu_milli(2429);
  t.mutable_quota_usage()->set_vclusters(2);
  t.mutable_quota_usage()->set_pods(7);  // not bounded: not shown
  EXPECT_EQ(TenantTable(AsList(t)).rows[0].back(), "gpus 2.429/4.000, vclusters 2/0");
}

TEST(Output, JsonUsesProtoFieldNamesInProtoOrderAndPrintsEveryField) {
  v1::Tenant t;
  t.set_name("acme");
  t.set_trust_tier("shared");
  EXPECT_EQ(RenderJson(t),
            "{\n"
            "  \"name\": \"acme\",\n"
            "  \"display_name\": \"\",\n"
            "  \"trust_tier\": \"shared\",\n"
            "  \"labels\": {},\n"
            "  \"state\": \"STATE_UNSPECIFIED\",\n"
            "  \"etag\": \"\"\n"
            "}\n");
}

TEST(Output, YamlIsTheSameDocumentAsJson) {
  const v1::Tenant tenant = Acme();
  const auto json = nlohmann::json::parse(RenderJson(tenant));
  const std::string yaml = RenderYaml(tenant);
  EXPECT_EQ(FromYaml(YAML::Load(yaml)), json) << yaml;
  EXPECT_NE(yaml.find("name: acme\n"), std::string::npos) << yaml;
  EXPECT_NE(yaml.find("gpu: \"true\""), std::string::npos) << yaml;
  EXPECT_NE(yaml.find("cost: \"1234\""), std::string::npos) << yaml;
}

TEST(Output, YamlOfEmptyCollectionsIsFlowStyle) {
  v1::ListTenantsResponse empty;
  EXPECT_EQ(RenderYaml(empty), "tenants: []\nnext_page_token: \"\"\n");
}

TEST(Output, RenderPicksTheFormat) {
  const v1::Tenant tenant = Acme();
  const Table table = TenantTable(AsList(tenant));
  EXPECT_EQ(Render(OutputFormat::kTable, tenant, table), RenderTable(table));
  EXPECT_EQ(Render(OutputFormat::kJson, tenant, table), RenderJson(tenant));
  EXPECT_EQ(Render(OutputFormat::kYaml, tenant, table), RenderYaml(tenant));
}

// ---- Issue 9 #8: untrusted strings cannot drive the admin's terminal ----

// Bytes that a terminal acts on: C0 (but the newline that ends a line of
// output), DEL, C1 (UTF-8 C2 80..9F), and bidi overrides/isolates.
bool HasTerminalControl(const std::string& text) {
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if ((c < 0x20 && c != '\n') || c == 0x7f) return true;
    if (c == 0xc2 && i + 1 < text.size() && static_cast<unsigned char>(text[i + 1]) < 0xa0) return true;
    if (text.compare(i, 3, "\u202e") == 0 || text.compare(i, 3, "\u2066") == 0) return true;
  }
  return false;
}

TEST(Output, UntrustedStringsAreEscapedVisiblyInEveryFormat) {
  v1::ListTokensResponse tokens;
  v1::ApiToken* token = tokens.add_tokens();
  token->set_id("0123456789abcdef");
  token->set_principal("tenant:acme");
  token->set_role("viewer");
  token->set_description("\x1b[2J\x1b[Hpwned\r\n\t\x7f \u009b2J evil\u202Egnp.exe Équipe");
  (*tokens.add_tokens()) = *token;
  for (OutputFormat format : {OutputFormat::kTable, OutputFormat::kJson, OutputFormat::kYaml}) {
    const std::string out = Render(format, tokens, TokenTable(tokens.tokens()));
    EXPECT_FALSE(HasTerminalControl(out)) << static_cast<int>(format) << ":\n" << out;
    EXPECT_NE(out.find("Équipe"), std::string::npos) << out;  // printable text stays as it is
  }
  const std::string table = Render(OutputFormat::kTable, tokens, TokenTable(tokens.tokens()));
  EXPECT_NE(table.find(R"(\u001b[2J\u001b[Hpwned\r\n\t\u007f \u009b2J evil\u202egnp.exe)"), std::string::npos) << table;
  EXPECT_EQ(std::count(table.begin(), table.end(), '\n'), 3) << table;  // header and two rows
  // JSON and YAML still read back as the original string.
  const auto json = nlohmann::json::parse(RenderJson(tokens));
  EXPECT_EQ(json["tokens"][0]["description"], token->description());
  const YAML::Node yaml = YAML::Load(RenderYaml(tokens));
  EXPECT_EQ(yaml["tokens"][0]["description"].as<std::string>(), token->description());
}

}  // namespace
}  // namespace septa::cli
