#include "services/base/yaml_json.h"

#include <gtest/gtest.h>

namespace septa::base {
namespace {

using nlohmann::json;

json Convert(const std::string& yaml) { return YamlToJson(YAML::Load(yaml)); }

TEST(YamlToJson, CoreSchemaScalars) {
  EXPECT_EQ(Convert("[null, Null, NULL, ~]"), json::parse("[null, null, null, null]"));
  EXPECT_EQ(Convert("[true, True, TRUE, false, False, FALSE]"), json::parse("[true, true, true, false, false, false]"));
  EXPECT_EQ(Convert("[0, -12, +7, 0o17, 0x1F, 0777]"), json::parse("[0, -12, 7, 15, 31, 777]"));
  EXPECT_EQ(Convert("[1.5, -.5, 1e3, 2.]"), json::parse("[1.5, -0.5, 1000.0, 2.0]"));
  EXPECT_TRUE(Convert("0x1F").is_number_integer());
  EXPECT_TRUE(Convert("1e3").is_number_float());
  EXPECT_EQ(Convert("99999999999999999999"), json(1e20));  // beyond 64 bits: a float
}

TEST(YamlToJson, EverythingElseIsAString) {
  // YAML 1.1 booleans and the words of other schemas are strings in 1.2.
  EXPECT_EQ(Convert("[yes, no, on, off, y, nil, none]"), json::parse(R"(["yes","no","on","off","y","nil","none"])"));
  EXPECT_EQ(Convert("['1', \"true\", '', \"null\", !!str 3]"), json::parse(R"(["1","true","","null","3"])"));
  EXPECT_EQ(Convert("[1.2.3, 0x, 0o8, 12abc, 1_000, .inf, .nan, 1e999]"),
            json::parse(R"(["1.2.3","0x","0o8","12abc","1_000",".inf",".nan","1e999"])"));
}

TEST(YamlToJson, CollectionsAndKeys) {
  EXPECT_EQ(Convert("{a: {b: [1, {c: d}]}, 1: x, e:}"),
            json::parse(R"({"a": {"b": [1, {"c": "d"}]}, "1": "x", "e": null})"));
  EXPECT_EQ(Convert(""), json(nullptr));
}

// Whatever JsonToYaml writes, YamlToJson reads back as the same JSON.
TEST(JsonToYaml, RoundTrips) {
  const auto doc = nlohmann::ordered_json::parse(R"({
    "openapi": "3.1.0",
    "strings": ["true", "False", "null", "~", "", "42", "-1.5e3", "0x1F", "0o7", "yes", "a: b", "# not a comment",
                "- item", "[x]", "{y}", "'quoted'", "\"dq\"", " lead", "trail ", "tab\there", "é ü"],
    "multi": "first line\nsecond: line\n  indented\n",
    "multi_no_final_newline": "one\ntwo",
    "multi_odd": [" lead\nx\n", "two breaks\n\n", "one line\n", "\n"],
    "numbers": [0, -7, 9007199254740993, 1.5, -0.25],
    "flags": [true, false, null],
    "empty": {"array": [], "object": {}},
    "keys": {"200": "ok", "true": 1, "": 2, "a b": 3, "/v1/tenants/{name}": {"get": {}}}
  })");
  const std::string yaml = JsonToYaml(doc);
  EXPECT_EQ(Convert(yaml), json::parse(doc.dump())) << yaml;
}

TEST(JsonToYaml, KeepsKeyOrderAndWritesBlocks) {
  const auto doc = nlohmann::ordered_json::parse(R"({"openapi": "3.1.0", "info": {"title": "t"}, "paths": {}})");
  EXPECT_EQ(JsonToYaml(doc), "openapi: 3.1.0\ninfo:\n  title: t\npaths: {}\n");
}

}  // namespace
}  // namespace septa::base
