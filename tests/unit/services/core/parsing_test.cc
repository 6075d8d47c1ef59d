#include <gtest/gtest.h>

#include "common/duration.h"
#include "services/base/base64.h"
#include "services/core/auth.h"
#include "services/core/crypto.h"
#include "services/core/tenant_query.h"
#include "services/core/validation.h"
#include "services/core/virtual_object_store.h"

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

TEST(BearerToken, IsWhatFollowsTheSchemeInAnyCaseAndNothingElse) {
  EXPECT_EQ(BearerToken("Bearer septa_abc"), "septa_abc");
  EXPECT_EQ(BearerToken("bearer septa_abc"), "septa_abc");
  EXPECT_EQ(BearerToken("BEARER septa_abc"), "septa_abc");
  for (const char* other : {"septa_abc", "Basic dXNlcjpwdw==", "Bearer", "Bearer ", "Bearersepta_abc", ""}) {
    EXPECT_EQ(BearerToken(other), "") << other;
  }
}

TEST(VirtualClusterKeyText, SplitsAtTheSlashAndRefusesTextWithout) {
  EXPECT_EQ(ParseVirtualClusterKey("acme/train"), (VirtualClusterKey{"acme", "train"}));
  EXPECT_EQ(ParseVirtualClusterKey("acme/"), (VirtualClusterKey{"acme", ""}));
  EXPECT_EQ(ParseVirtualClusterKey("acme"), std::nullopt);
  EXPECT_EQ(ParseVirtualClusterKey(""), std::nullopt);
}

TEST(PageToken, RoundTripsAndRejectsGarbage) {
  auto name = DecodePageToken(EncodePageToken("tenant-7"));
  ASSERT_TRUE(name.ok());
  EXPECT_EQ(*name, "tenant-7");
  EXPECT_FALSE(DecodePageToken("%%%").ok());
  EXPECT_FALSE(DecodePageToken(base::Base64UrlEncode("before:x")).ok());
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

TEST(Validation, Labels) {
  EXPECT_TRUE(ValidateLabels("labels", {{"example.com/team", "ml"}, {"empty", ""}}).ok());
  EXPECT_FALSE(ValidateLabels("labels", {{"Bad_Prefix.com/x", "y"}}).ok());
}

TEST(Validation, NamesThatCannotExist) {
  EXPECT_TRUE(CanNameTenantOrTier("acme"));
  EXPECT_FALSE(CanNameTenantOrTier(std::string("acme\0x", 6)));
  EXPECT_FALSE(CanNameTenantOrTier("\xff"));
  EXPECT_TRUE(CanNameToken("0123456789abcdef"));
  EXPECT_FALSE(CanNameToken("0123456789ABCDEF"));
  EXPECT_FALSE(CanNameToken(std::string("01234567\0", 9)));
}

TEST(Filter, RefusesNulAndInvalidUtf8) {
  for (const std::string& bad : {std::string("trust_tier=shared\0x", 19), std::string("labels.a=\xff")}) {
    TenantQuery q;
    Status st = ParseTenantFilter(bad, q);
    ASSERT_FALSE(st.ok());
    EXPECT_EQ(st.violations()[0].field, "filter");
  }
}

TEST(Crypto, Sha256) {
  EXPECT_EQ(Sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

}  // namespace
}  // namespace septa::core
