#include "common/quantity.h"

#include <gtest/gtest.h>

namespace septa {
namespace {

TEST(commonQuantity, CanonicalTextAsTheApiServerPrintsIt) {
  EXPECT_EQ(FormatQuantityMilli(0, false), "0");
  EXPECT_EQ(FormatQuantityMilli(250, false), "250m");
  EXPECT_EQ(FormatQuantityMilli(1500, false), "1500m");
  EXPECT_EQ(FormatQuantityMilli(2000, false), "2");
  EXPECT_EQ(FormatQuantityMilli(1'000'000, false), "1k");
  EXPECT_EQ(FormatQuantityMilli(1'000'000'000'000LL, false), "1G");
  EXPECT_EQ(FormatQuantityMilli(1'073'741'824'000LL, true), "1Gi");
  EXPECT_EQ(FormatQuantityMilli(1536LL * 1024 * 1024 * 1000, true), "1536Mi");
  EXPECT_EQ(FormatQuantityMilli(512'000, true), "512");   // below 1024: no binary suffix
  EXPECT_EQ(FormatQuantityMilli(1'000'000, true), "1k");  // ... but decimal ones
}

TEST(commonQuantity, ParsesDecimalBinaryAndMilliSuffixes) {
  EXPECT_EQ(*ParseQuantityMilli("500m"), 500);
  EXPECT_EQ(*ParseQuantityMilli("96"), 96000);
  EXPECT_EQ(*ParseQuantityMilli("1.5"), 1500);
  EXPECT_EQ(*ParseQuantityMilli("1Ki"), 1024000);
  EXPECT_EQ(*ParseQuantityMilli("1Ti"), 1'099'511'627'776'000LL);
  EXPECT_EQ(*ParseQuantityMilli("2G"), 2'000'000'000'000LL);
  EXPECT_EQ(*ParseQuantityMilli("1e3"), 1'000'000);
}

TEST(commonQuantity, RefusesWhatIsNotAQuantity) {
  for (const char* bad : {"lots", "", "-1", "1Xi", "12 ", "Gi", "1e40", "nan"}) {
    EXPECT_EQ(ParseQuantityMilli(bad).status().code(), Code::kInvalidArgument) << bad;
  }
}

TEST(commonQuantity, CanonicalTextParsesBackToItself) {
  for (const char* text : {"250m", "2", "1k", "1Gi", "1536Mi", "3G"}) {
    const bool binary = std::string_view(text).ends_with('i');
    EXPECT_EQ(FormatQuantityMilli(*ParseQuantityMilli(text), binary), text);
  }
}

}  // namespace
}  // namespace septa
