#include "common/documents.h"

#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <string>

#include "tests/support/hostile_documents.h"

namespace septa {
namespace {

using nlohmann::json;

std::string Arrays(std::size_t depth) { return test::NestedArrays(depth); }

std::string Objects(std::size_t depth) {
  std::string text;
  for (std::size_t i = 0; i < depth; ++i) text += R"({"a":)";
  return text + "1" + std::string(depth, '}');
}

// The finding's bomb (H1): 7 levels of anchors, each a list of ten aliases
// of the level below, in a ConfigMap of under 500 bytes: 10^7 nodes expanded.
std::string AliasBomb(int levels = 7) {
  return "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: bomb\ndata:\n" + test::YamlAliasBomb(levels, "  ");
}

double SecondsFor(const std::function<void()>& work) {
  const auto start = std::chrono::steady_clock::now();
  work();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

TEST(ParseJson, DepthUpToTheBoundIsReadOnePastIsRefused) {
  for (const auto& nest : {Arrays, Objects}) {
    auto at = ParseJson(nest(kMaxDocumentDepth));
    ASSERT_TRUE(at.ok()) << at.status().ToString();
    EXPECT_EQ(JsonDepth(*at), kMaxDocumentDepth);
    auto past = ParseJson(nest(kMaxDocumentDepth + 1));
    ASSERT_FALSE(past.ok());
    EXPECT_EQ(past.status().code(), Code::kInvalidArgument);
    EXPECT_EQ(past.status().message(), "the document nests deeper than 128 levels");
  }
}

TEST(ParseJson, TheFindingsBodyIsRefusedAtOnce) {
  // C1: a ConfigMap whose data nests 100,000 arrays (200 KB) overflowed the stack.
  const std::string body =
      R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"deep"},"data":{"a":)" + Arrays(100'000) + "}}";
  Result<json> parsed = json();
  EXPECT_LT(SecondsFor([&] { parsed = ParseJson(body); }), 0.5);
  ASSERT_FALSE(parsed.ok());
  EXPECT_NE(parsed.status().message().find("nests deeper than 128 levels"), std::string::npos);
}

TEST(ParseJson, ALimitOfItsOwnApplies) {
  EXPECT_TRUE(ParseJson(Arrays(32), {.max_depth = 32}).ok());
  EXPECT_EQ(ParseJson(Arrays(33), {.max_depth = 32}).status().message(), "the document nests deeper than 32 levels");
  const std::string text = R"({"a":")" + std::string(100, 'x') + R"("})";
  EXPECT_TRUE(ParseJson(text, {.max_bytes = text.size()}).ok());
  auto big = ParseJson(text, {.max_bytes = text.size() - 1});
  ASSERT_FALSE(big.ok());
  EXPECT_EQ(big.status().message(), "the document is 108 bytes, more than 107");
}

TEST(ParseJson, ErrorsSayWhereAndWhichField) {
  auto malformed = ParseJson("{\"name\": \"a\",\n \"trust_tier\": }");
  ASSERT_FALSE(malformed.ok());
  EXPECT_NE(malformed.status().message().find("malformed JSON at line 2, column 16"), std::string::npos)
      << malformed.status().message();
  auto utf8 = ParseJson("{\"labels\":{\"team\":\"a\xff\"}}");
  ASSERT_FALSE(utf8.ok());
  ASSERT_EQ(utf8.status().violations().size(), 1u);
  EXPECT_EQ(utf8.status().violations()[0].field, "labels.team");
  auto number = ParseJson(R"({"spec":{"replicas":[1e999]}})");
  ASSERT_FALSE(number.ok());
  EXPECT_EQ(number.status().violations()[0].field, "spec.replicas");
  EXPECT_NE(number.status().message().find("number 1e999 is out of range"), std::string::npos);
  EXPECT_FALSE(ParseJson("[1] x").ok());  // the whole text is one value
  EXPECT_FALSE(ParseJson("").ok());
  // Syntax errors are told from refusals, for callers that try YAML next.
  EXPECT_TRUE(IsMalformedDocument(malformed.status()));
  EXPECT_TRUE(IsMalformedDocument(ParseJson("a: 1").status()));
  EXPECT_FALSE(IsMalformedDocument(utf8.status()));
  EXPECT_FALSE(IsMalformedDocument(ParseJson(Arrays(200)).status()));
  EXPECT_TRUE(IsMalformedDocument(ParseYaml("a: [1").status()));
  EXPECT_FALSE(IsMalformedDocument(ParseYaml("&a [*a]").status()));
}

TEST(ParseJson, BuildsWhatNlohmannBuilds) {
  const std::string text =
      R"({"a":[1,-2,3.5,"x",true,null,{"b":[]},[[{}]]],"dup":1,"dup":2,"u":18446744073709551615,"e":"\u00e9"})";
  auto parsed = ParseJson(text);
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(*parsed, json::parse(text));
}

TEST(ParseYaml, DepthUpToTheBoundIsReadOnePastIsRefused) {
  const auto block = [](std::size_t depth) {
    std::string text;
    for (std::size_t i = 0; i + 1 < depth; ++i) text += std::string(2 * i, ' ') + "a:\n";
    return text + std::string(2 * (depth - 1), ' ') + "a: 1\n";
  };
  for (const std::function<std::string(std::size_t)>& nest :
       {std::function<std::string(std::size_t)>(Arrays), std::function<std::string(std::size_t)>(Objects),
        std::function<std::string(std::size_t)>(block)}) {
    auto at = ParseYaml(nest(kMaxDocumentDepth));
    ASSERT_TRUE(at.ok()) << at.status().ToString();
    auto past = ParseYaml(nest(kMaxDocumentDepth + 1));
    ASSERT_FALSE(past.ok());
    EXPECT_NE(past.status().message().find("the document nests deeper than 128 levels at line"), std::string::npos)
        << past.status().message();
  }
  // 100,000 levels: yaml-cpp's own guard (500) would say "bad file"; this says why.
  auto deep = ParseYaml(Arrays(100'000));
  ASSERT_FALSE(deep.ok());
  EXPECT_NE(deep.status().message().find("nests deeper than 128 levels"), std::string::npos);
}

TEST(ParseYaml, DepthCountsAliasesExpanded) {
  // 100 levels under an anchor, used 40 levels down: 140 once expanded.
  const std::string text =
      "a: &deep " + Arrays(100) + "\nb: " + std::string(40, '[') + "*deep" + std::string(40, ']') + "\n";
  auto parsed = ParseYaml(text);
  ASSERT_FALSE(parsed.ok());
  EXPECT_NE(parsed.status().message().find("nests deeper than 128 levels at line 2"), std::string::npos)
      << parsed.status().message();
}

TEST(ParseYaml, TheAliasBombIsRefusedBeforeAnythingIsExpanded) {
  const std::string bomb = AliasBomb();
  ASSERT_LT(bomb.size(), 500u);
  Result<YAML::Node> parsed = YAML::Node();
  EXPECT_LT(SecondsFor([&] { parsed = ParseYaml(bomb); }), 0.5);  // septad took 20 s and 3.1 GB more
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.status().code(), Code::kInvalidArgument);
  EXPECT_NE(parsed.status().message().find("expands excessively through aliases"), std::string::npos)
      << parsed.status().message();
  // Two levels (100 nodes from aliases) stay under go-yaml's bound: refused
  // only past 1,000 nodes.
  EXPECT_TRUE(ParseYaml(AliasBomb(2)).ok());
}

TEST(ParseYaml, AliasesAsManifestsUseThemAreRead) {
  // Shared settings reused by a few containers: a small share of the nodes.
  std::string text = "defaults: &env\n  - {name: A, value: \"1\"}\n  - {name: B, value: \"2\"}\ncontainers:\n";
  for (int i = 0; i < 50; ++i) text += "  - name: c" + std::to_string(i) + "\n    env: *env\n";
  auto parsed = ParseYaml(text);
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ((*parsed)["containers"][49]["env"][1]["value"].as<std::string>(), "2");
}

TEST(ParseYaml, AnAliasInsideItsOwnNodeIsRefused) {
  // yaml-cpp builds a cycle from this; converting it recursed forever.
  for (const char* text : {"&a [*a]", "a: &a {b: [1, *a]}"}) {
    auto parsed = ParseYaml(text);
    ASSERT_FALSE(parsed.ok()) << text;
    EXPECT_NE(parsed.status().message().find("an alias refers to a node that contains it"), std::string::npos)
        << parsed.status().message();
  }
}

// Found by fuzz/kube_body_fuzzer.cc: yaml-cpp takes any bytes, and the
// tree's JSON could not be written (a 500 on the virtual API).
TEST(ParseYaml, AStringThatIsNotUtf8IsRefused) {
  auto parsed = ParseYaml("data:\n  a: \"x\xac\"\n");
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.status().message(), "a string is not valid UTF-8 at line 2, column 6");
  EXPECT_FALSE(ParseYaml("\xff: 1\n").ok());  // a key too
  EXPECT_TRUE(ParseYaml("a: \"\xc3\xa9\"\n").ok());
}

TEST(ParseYaml, SizeAndSyntaxErrors) {
  EXPECT_EQ(ParseYaml("a: 1\n", {.max_bytes = 4}).status().message(), "the document is 5 bytes, more than 4");
  auto malformed = ParseYaml("a: [1\nb: *nowhere\n");
  ASSERT_FALSE(malformed.ok());
  EXPECT_NE(malformed.status().message().find("malformed YAML at line"), std::string::npos)
      << malformed.status().message();
  auto undefined = ParseYaml("a: *nowhere\n");
  ASSERT_FALSE(undefined.ok());
  EXPECT_NE(undefined.status().message().find("anchor"), std::string::npos) << undefined.status().message();
}

TEST(ParseYamlStream, ReadsEveryDocumentAnEmptyOneAsNull) {
  auto parsed = ParseYamlStream("a: 1\n---\n---\n# only a comment\n---\n[2, 3]\n", 10);
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  ASSERT_EQ(parsed->size(), 4u);
  EXPECT_EQ((*parsed)[0]["a"].as<int>(), 1);
  EXPECT_TRUE((*parsed)[1].IsNull());
  EXPECT_TRUE((*parsed)[2].IsNull());
  EXPECT_EQ((*parsed)[3][1].as<int>(), 3);
  auto none = ParseYamlStream("", 10);
  ASSERT_TRUE(none.ok()) << none.status().ToString();
  EXPECT_TRUE(none->empty());
}

TEST(ParseYamlStream, MoreDocumentsThanTheCapAreRefused) {
  std::string text;
  for (int i = 0; i < 5; ++i) text += "---\na: " + std::to_string(i) + "\n";
  EXPECT_TRUE(ParseYamlStream(text, 5).ok());
  EXPECT_EQ(ParseYamlStream(text, 4).status().message(), "the stream holds more than 4 documents");
  // Empty documents count: "---" alone costs nothing to write.
  std::string empties;
  for (int i = 0; i < 1000; ++i) empties += "---\n";
  EXPECT_EQ(ParseYamlStream(empties, 100).status().message(), "the stream holds more than 100 documents");
}

TEST(ParseYamlStream, ABombInALaterDocumentIsRefusedBeforeAnythingIsExpanded) {
  const std::string stream = "a: 1\n---\nb: 2\n---\n" + AliasBomb();
  Result<std::vector<YAML::Node>> parsed = std::vector<YAML::Node>();
  EXPECT_LT(SecondsFor([&] { parsed = ParseYamlStream(stream, 10); }), 0.5);
  ASSERT_FALSE(parsed.ok());
  EXPECT_NE(parsed.status().message().find("expands excessively through aliases"), std::string::npos)
      << parsed.status().message();
}

TEST(ParseYamlStream, BoundsHoldPerDocumentAndForTheWholeStream) {
  // Depth is per document: each at the bound is read, one past it is not.
  const std::string at = Arrays(kMaxDocumentDepth);
  EXPECT_TRUE(ParseYamlStream(at + "\n---\n" + at + "\n", 2).ok());
  auto deep = ParseYamlStream(at + "\n---\n" + Arrays(kMaxDocumentDepth + 1) + "\n", 2);
  ASSERT_FALSE(deep.ok());
  EXPECT_NE(deep.status().message().find("nests deeper than 128 levels at line 3"), std::string::npos)
      << deep.status().message();
  // The byte bound is the whole stream's.
  EXPECT_EQ(ParseYamlStream("a: 1\n---\nb: 2\n", 2, {.max_bytes = 10}).status().message(),
            "the document is 14 bytes, more than 10");
  // An anchor names a node of its own document only.
  auto across = ParseYamlStream("a: &x [1]\n---\nb: *x\n", 2);
  ASSERT_FALSE(across.ok());
  EXPECT_TRUE(IsMalformedDocument(across.status())) << across.status().message();
  auto within = ParseYamlStream("a: 1\n---\nb: &x [1]\nc: *x\n", 2);
  ASSERT_TRUE(within.ok()) << within.status().ToString();
  EXPECT_EQ((*within)[1]["c"][0].as<int>(), 1);
}

TEST(JsonDepth, CountsWithoutRecursionAndStopsPastTheLimit) {
  EXPECT_EQ(JsonDepth(json(1)), 0u);
  EXPECT_EQ(JsonDepth(json::array()), 1u);
  EXPECT_EQ(JsonDepth(json::parse(R"({"a":[1,{"b":{}}],"c":2})")), 4u);
  // A tree far deeper than any recursion could walk (built by nlohmann's
  // iterative parser): measured up to the limit only.
  const json deep = json::parse(Arrays(200'000));
  EXPECT_EQ(JsonDepth(deep, 128), 129u);
}

}  // namespace
}  // namespace septa
