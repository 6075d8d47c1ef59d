#include "common/text.h"

#include <gtest/gtest.h>

#include <string>

namespace septa {
namespace {

TEST(Text, Dns1123Labels) {
  EXPECT_TRUE(IsDns1123Label("a"));
  EXPECT_TRUE(IsDns1123Label("a-1"));
  EXPECT_FALSE(IsDns1123Label("a-"));
  EXPECT_FALSE(IsDns1123Label("a_b"));
  EXPECT_FALSE(IsDns1123Label(""));
  EXPECT_TRUE(IsDns1123Label(std::string(63, 'a')));
  EXPECT_FALSE(IsDns1123Label(std::string(41, 'a'), 40));
}

TEST(Text, Utf8IsCheckedStrictly) {
  EXPECT_TRUE(IsValidUtf8("Équipe Ω 東京 🚀"));
  for (const std::string bad : {"\xff", "a\xc3", "\xc0\xaf" /* overlong '/' */, "\xed\xa0\x80" /* surrogate */,
                                "\xf4\x90\x80\x80" /* above U+10FFFF */}) {
    EXPECT_FALSE(IsValidUtf8(bad)) << EscapeControlCharacters(bad);
  }
}

TEST(Text, RefusesControlAndBidiCharactersNamingTheField) {
  EXPECT_TRUE(ValidateText("description", "Équipe Ω — 東京", 200).ok());
  for (const std::string& bad :
       {std::string("a\0b", 3), std::string("\x1b[2J"), std::string("a\tb"), std::string("a\nb"),
        std::string("del\x7f"), std::string("csi\u009b"), std::string("evil\u202egnp"), std::string("iso\u2066x"),
        std::string("ls\u2028"), std::string("\xff")}) {
    Status st = ValidateText("description", bad, 200);
    ASSERT_FALSE(st.ok()) << EscapeControlCharacters(bad);
    EXPECT_EQ(st.violations()[0].field, "description");
  }
  EXPECT_FALSE(ValidateText("description", std::string(201, 'a'), 200).ok());
}

TEST(Text, JoinIsSplitsInverse) {
  EXPECT_EQ(Join({"a", "b", "c"}, ", "), "a, b, c");
  EXPECT_EQ(Join({}, ", "), "");
  EXPECT_EQ(Join({"only"}, "/"), "only");
  EXPECT_EQ(Join(Split("x.y..z", '.'), "."), "x.y..z");
}

TEST(Text, DropTrailingLineBreaksLeavesTheLineItself) {
  for (const auto& [in, out] : std::vector<std::pair<std::string, std::string>>{{"s3cret\n", "s3cret"},
                                                                                {"s3cret\r\n\n", "s3cret"},
                                                                                {"s3 cret ", "s3 cret "},
                                                                                {"a\nb", "a\nb"},
                                                                                {"\n", ""}}) {
    std::string text = in;
    DropTrailingLineBreaks(text);
    EXPECT_EQ(text, out) << in;
  }
}

TEST(Text, EscapingMakesControlsVisibleAndKeepsText) {
  EXPECT_EQ(EscapeControlCharacters("\x1b[2J\r\n\t\x7f\u009b\u202e Ω"), R"(\u001b[2J\r\n\t\u007f\u009b\u202e Ω)");
  EXPECT_EQ(EscapeControlCharacters("ok\xff"), R"(ok\xff)");
  EXPECT_EQ(EscapeControlCharacters("a\nb\x1b", /*keep_newlines=*/true), "a\nb\\u001b");
}

}  // namespace
}  // namespace septa
