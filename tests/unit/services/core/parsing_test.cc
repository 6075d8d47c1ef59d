#include <gtest/gtest.h>

#include "services/core/crypto.h"
#include "services/core/duration.h"
#include "services/core/tenant_query.h"
#include "services/core/validation.h"

namespace septa::core {
namespace {

TEST(Duration, ParsesGoStyle) {
  EXPECT_EQ(ParseDuration("ttl", "90m")->count(), 5400);
  EXPECT_EQ(ParseDuration("ttl", "1h30m15s")->count(), 5415);
  EXPECT_EQ(FormatDuration(std::chrono::seconds(5415)), "1h30m15s");
  for (const char* bad : {"", "h", "10", "5d", "1h-2m", "99999999999h"}) {
    auto r = ParseDuration("ttl", bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.status().violations()[0].field, "ttl");
  }
}

TEST(PageToken, RoundTripsAndRejectsGarbage) {
  auto name = DecodePageToken(EncodePageToken("tenant-7"));
  ASSERT_TRUE(name.ok());
  EXPECT_EQ(*name, "tenant-7");
  EXPECT_FALSE(DecodePageToken("%%%").ok());
  EXPECT_FALSE(DecodePageToken(Base64UrlEncode("before:x")).ok());
}

TEST(Filter, ParsesTierAndLabels) {
  TenantQuery q;
  ASSERT_TRUE(ParseTenantFilter(" trust_tier=shared AND labels.app.kubernetes.io/name=\"x\" ", q).ok());
  EXPECT_EQ(q.trust_tier, "shared");
  EXPECT_EQ(q.labels.at("app.kubernetes.io/name"), "x");
  TenantQuery twice;
  EXPECT_FALSE(ParseTenantFilter("trust_tier=a AND trust_tier=b", twice).ok());
  TenantQuery bare;
  EXPECT_FALSE(ParseTenantFilter("shared", bare).ok());
}

TEST(Validation, Dns1123Labels) {
  EXPECT_TRUE(IsDns1123Label("a"));
  EXPECT_TRUE(IsDns1123Label("a-1"));
  EXPECT_FALSE(IsDns1123Label("a-"));
  EXPECT_FALSE(IsDns1123Label("a_b"));
  EXPECT_FALSE(IsDns1123Label(""));
  EXPECT_TRUE(ValidateTenantName("name", std::string(40, 'a')).ok());
  EXPECT_FALSE(ValidateTenantName("name", std::string(41, 'a')).ok());
  EXPECT_FALSE(ValidateDisplayName("display_name", "\xff\xfe").ok());
  EXPECT_TRUE(ValidateDisplayName("display_name", "Équipe Ω").ok());
  EXPECT_TRUE(ValidateLabels("labels", {{"example.com/team", "ml"}, {"empty", ""}}).ok());
  EXPECT_FALSE(ValidateLabels("labels", {{"Bad_Prefix.com/x", "y"}}).ok());
}

TEST(Crypto, Sha256AndBase64Url) {
  EXPECT_EQ(Sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(Base64UrlEncode("\xfb\xff"), "-_8");
  EXPECT_EQ(*Base64UrlDecode("-_8"), "\xfb\xff");
  EXPECT_TRUE(ConstantTimeEquals("abc", "abc"));
  EXPECT_FALSE(ConstantTimeEquals("abc", "abd"));
  EXPECT_FALSE(ConstantTimeEquals("abc", "ab"));
}

}  // namespace
}  // namespace septa::core
