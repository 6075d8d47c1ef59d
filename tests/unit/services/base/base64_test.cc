#include "services/base/base64.h"

#include <gtest/gtest.h>

namespace septa::base {
namespace {

TEST(Base64, StandardRoundTripsWithPadding) {
  EXPECT_EQ(Base64Encode(""), "");
  EXPECT_EQ(Base64Encode("f"), "Zg==");
  EXPECT_EQ(Base64Encode("fo"), "Zm8=");
  EXPECT_EQ(Base64Encode("foo"), "Zm9v");
  EXPECT_EQ(Base64Encode("\xfb\xff"), "+/8=");
  const std::string bytes("\0\x01\xfe\xff xyz", 8);
  EXPECT_EQ(Base64Decode(Base64Encode(bytes)), bytes);
}

TEST(Base64, StandardDecodeIgnoresLineBreaksAndRejectsGarbage) {
  EXPECT_EQ(Base64Decode("Zm9v\nYmFy\n"), "foobar");
  EXPECT_EQ(Base64Decode(" Zm8= "), "fo");
  EXPECT_EQ(Base64Decode(""), "");
  EXPECT_FALSE(Base64Decode("Zm8").has_value());   // unpadded
  EXPECT_FALSE(Base64Decode("Zg=A").has_value());  // '=' inside
  EXPECT_FALSE(Base64Decode("Z===").has_value());  // too much padding
  EXPECT_FALSE(Base64Decode("Zg==Zm9v").has_value());
  EXPECT_FALSE(Base64Decode("-_8=").has_value());  // URL-safe digits
  EXPECT_FALSE(Base64Decode("Zm9*").has_value());
}

TEST(Base64, UrlSafeIsUnpadded) {
  EXPECT_EQ(Base64UrlEncode("\xfb\xff"), "-_8");
  EXPECT_EQ(Base64UrlDecode("-_8"), "\xfb\xff");
  EXPECT_EQ(Base64UrlEncode("foo"), "Zm9v");
  EXPECT_EQ(Base64UrlDecode("Zg"), "f");
  EXPECT_EQ(Base64UrlDecode(""), "");
  EXPECT_FALSE(Base64UrlDecode("+/8").has_value());    // standard digits
  EXPECT_FALSE(Base64UrlDecode("Zg==").has_value());   // padding
  EXPECT_FALSE(Base64UrlDecode("Zm9vY").has_value());  // a length no bytes encode to
  EXPECT_FALSE(Base64UrlDecode("Zm 9").has_value());
  const std::string bytes(32, '\xa5');
  EXPECT_EQ(Base64UrlEncode(bytes).size(), 43u);
  EXPECT_EQ(Base64UrlDecode(Base64UrlEncode(bytes)), bytes);
}

}  // namespace
}  // namespace septa::base
