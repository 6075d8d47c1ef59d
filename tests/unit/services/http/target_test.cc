#include "services/http/target.h"

#include <gtest/gtest.h>

namespace septa::http {
namespace {

TEST(httpTarget, SplitsThenDecodesSegments) {
  auto t = ParseTarget("/api/v1/namespaces/a%2Fb//pods/?limit=5&labelSelector=app%3Dweb%2Ctier+in+(x)&flag");
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->path, "/api/v1/namespaces/a%2Fb//pods/");
  EXPECT_EQ(t->segments, (std::vector<std::string>{"api", "v1", "namespaces", "a/b", "pods"}));
  EXPECT_EQ(t->query.at("limit"), "5");
  EXPECT_EQ(t->query.at("labelSelector"), "app=web,tier in (x)");
  EXPECT_EQ(t->query.at("flag"), "");
}

TEST(httpTarget, RefusesMalformedEscapes) {
  EXPECT_FALSE(ParseTarget("/v1/tenants/%zz").has_value());
  EXPECT_FALSE(ParseTarget("/v1/tenants?filter=%4").has_value());
  EXPECT_FALSE(PercentDecode("%", false).has_value());
  EXPECT_EQ(*PercentDecode("a+b%20c", false), "a+b c");
  EXPECT_EQ(*PercentDecode("a+b%20c", true), "a b c");
}

TEST(httpTarget, APathSegmentIsEncodedSoThatItDecodesToItselfInOneSegment) {
  EXPECT_EQ(PercentEncodePathSegment("acme"), "acme");
  EXPECT_EQ(PercentEncodePathSegment("user:alice@acme.test"), "user:alice@acme.test");
  EXPECT_EQ(PercentEncodePathSegment("group:/eng/ml team"), "group:%2Feng%2Fml%20team");
  EXPECT_EQ(PercentEncodePathSegment("a%b?c#d+e"), "a%25b%3Fc%23d%2Be");
  const std::string zoe = "user:zo\xc3\xab";
  EXPECT_EQ(PercentEncodePathSegment(zoe), "user:zo%C3%AB");
  for (const std::string& text : {std::string("group:/eng/ml team"), std::string("a%b?c#d+e"), zoe}) {
    const auto target = ParseTarget("/v1/tenants/acme/members/" + PercentEncodePathSegment(text));
    ASSERT_TRUE(target.has_value()) << text;
    EXPECT_EQ(target->segments, (std::vector<std::string>{"v1", "tenants", "acme", "members", text}));
  }
}

TEST(httpTarget, QueryValuesKeepsEveryValueOfAKeyInOrder) {
  const std::string target = "/v1/things?tag=a&other=1&tag=b%20c&tag&tag=%zz&t%61g=d";
  EXPECT_EQ(ParseTarget(target), std::nullopt);  // the malformed pair refuses the whole target
  EXPECT_EQ(QueryValues(target, "tag"), (std::vector<std::string>{"a", "b c", "", "d"}));
  EXPECT_EQ(QueryValues("/v1/things?tag=a&tag=b", "tag"), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(ParseTarget("/v1/things?tag=a&tag=b")->query.at("tag"), "b");  // the last
  EXPECT_TRUE(QueryValues("/v1/things", "tag").empty());
}

}  // namespace
}  // namespace septa::http
