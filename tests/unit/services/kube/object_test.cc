// List decoding: what a list reply becomes, and the precise error for a reply
// that is not a list.
#include "services/kube/object.h"

#include <gtest/gtest.h>

#include "common/documents.h"

namespace septa::kube {
namespace {

using nlohmann::json;

const char* kTwoPods = R"({"kind":"PodList","apiVersion":"v1",
  "metadata":{"resourceVersion":"42","continue":"next-token"},
  "items":[
    {"metadata":{"name":"a","namespace":"ns","uid":"u-1","resourceVersion":"40","labels":{"app":"x"}},
     "spec":{"nodeName":"n1","containers":[{"name":"main","image":"i:1"}],"priority":-5,"big":18446744073709551615,"ratio":0.25,"on":true,"none":null}},
    {"metadata":{"name":"b\u00e9","namespace":"ns","resourceVersion":"41"},"spec":{}}
  ]})";

TEST(kubeObject, DecodesPageMetadataAndEveryItem) {
  auto page = DecodeListBody(kTwoPods);
  ASSERT_TRUE(page.ok()) << page.status().ToString();
  EXPECT_EQ(page->resource_version, "42");
  EXPECT_EQ(page->continue_token, "next-token");
  ASSERT_EQ(page->items.size(), 2u);
  const Object& a = page->items[0];
  EXPECT_EQ(a.Name(), "a");
  EXPECT_EQ(a.Namespace(), "ns");
  EXPECT_EQ(a.Uid(), "u-1");
  EXPECT_EQ(a.ResourceVersion(), "40");
  EXPECT_EQ(a.StringAt("/spec/nodeName"), "n1");
  EXPECT_EQ(a.StringAt("/spec/containers/0/image"), "i:1");
  EXPECT_EQ(a.StringAt("/spec/priority"), std::nullopt) << "not a string";
  EXPECT_EQ(a.StringAt("/spec/missing"), std::nullopt);
  EXPECT_TRUE(a.Has("/metadata/labels/app"));
  EXPECT_FALSE(a.Has("/metadata/labels/tier"));
  EXPECT_EQ(page->items[1].Name(), "b\xc3\xa9") << "escapes are decoded";
  EXPECT_EQ(page->items[1].Uid(), "");
}

TEST(kubeObject, ToJsonIsTheSameDocumentNlohmannWouldParse) {
  auto page = DecodeListBody(kTwoPods);
  ASSERT_TRUE(page.ok());
  json expected = json::parse(kTwoPods)["items"];
  for (std::size_t i = 0; i < 2; ++i) {
    json copy = page->items[i].ToJson();
    EXPECT_EQ(copy, expected[i]) << copy.dump();
    EXPECT_EQ(json::parse(page->items[i].Dump()), expected[i]);
  }
  EXPECT_TRUE(page->items[0].ToJson()["spec"]["priority"].is_number_integer());
  EXPECT_TRUE(page->items[0].ToJson()["spec"]["big"].is_number_unsigned());
}

TEST(kubeObject, ObjectsOutliveTheirPageAndTheBody) {
  std::vector<Object> kept;
  {
    std::string body = kTwoPods;
    auto page = DecodeListBody(body);
    ASSERT_TRUE(page.ok());
    kept.push_back(page->items[1]);
    body.assign(body.size(), 'x');  // the decoded form does not point into the body
  }
  EXPECT_EQ(kept[0].Name(), "b\xc3\xa9");
  EXPECT_EQ(kept[0].ResourceVersion(), "41");
}

TEST(kubeObject, EmptyAndNullItemsAreAnEmptyList) {
  for (const char* body :
       {R"({"metadata":{"resourceVersion":"7"},"items":[]})", R"({"metadata":{"resourceVersion":"7"},"items":null})",
        R"({"metadata":{"resourceVersion":"7"}})"}) {
    auto page = DecodeListBody(body);
    ASSERT_TRUE(page.ok()) << body;
    EXPECT_TRUE(page->items.empty());
    EXPECT_EQ(page->resource_version, "7");
    EXPECT_EQ(page->continue_token, "");
  }
}

TEST(kubeObject, RejectsBodiesThatAreNotLists) {
  struct Case {
    std::string body, message_part;
  };
  for (const Case& c : std::vector<Case>{{"", "Empty"},
                                         {"{\"items\":[", "not valid"},
                                         {"[1,2]", "not a JSON object"},
                                         {"{\"items\":{}}", "\"items\" is not an array"},
                                         {"{\"items\":[{}, 3]}", "items[1] is not an object"},
                                         {"{\"items\":[{\"a\":\"\\u12\"}]}", "not valid"},
                                         {"{\"items\":[]} trailing", "not valid"}}) {
    auto page = DecodeListBody(c.body);
    ASSERT_FALSE(page.ok()) << c.body;
    EXPECT_EQ(page.status().code(), Code::kInternal);
    EXPECT_NE(page.status().message().find(c.message_part), std::string::npos)
        << c.body << " -> " << page.status().ToString();
  }
}

// An object nested past the document bound (common/documents.h), as a real
// API server keeps it (it stores up to 10,000 levels): its list serves the
// other items and names it, instead of failing (the syncer's informers
// stopped at "The JSON document was too deep"); at the bound it is served.
TEST(kubeObject, AnItemDeeperThanTheBoundIsLeftOutByName) {
  const auto item = [](const std::string& name, std::size_t depth) {  // the item's own levels: depth
    return R"({"metadata":{"name":")" + name + R"(","namespace":"ns"},"data":{"a":)" + std::string(depth - 2, '[') +
           std::string(depth - 2, ']') + "}}";
  };
  const std::string body = R"({"kind":"ConfigMapList","metadata":{"resourceVersion":"7"},"items":[)" +
                           item("at", kMaxDocumentDepth) + "," + item("past", kMaxDocumentDepth + 1) + "," +
                           item("far", 5000) + "]}";
  auto page = DecodeListBody(body);
  ASSERT_TRUE(page.ok()) << page.status().ToString();
  ASSERT_EQ(page->items.size(), 1u);
  EXPECT_EQ(page->items[0].Name(), "at");
  EXPECT_EQ(page->items[0].ToJson()["metadata"]["name"], "at");
  EXPECT_EQ(page->resource_version, "7");
  EXPECT_EQ(page->left_out, (std::vector<std::string>{"ns/past: nests deeper than 128 levels",
                                                      "ns/far: nests deeper than 128 levels"}));
  // Past what any API server stores, the page itself is refused.
  auto absurd = DecodeListBody(R"({"items":[)" + item("x", 20000) + "]}");
  EXPECT_FALSE(absurd.ok());
}

}  // namespace
}  // namespace septa::kube
