#include "services/kube/quantity.h"

#include <gtest/gtest.h>

namespace septa::kube {
namespace {

TEST(kubeQuantity, ParsesDecimalBinaryAndMilliSuffixes) {
  EXPECT_EQ(*ParseQuantityMilli("500m"), 500);
  EXPECT_EQ(*ParseQuantityMilli("96"), 96000);
  EXPECT_EQ(*ParseQuantityMilli("1.5"), 1500);
  EXPECT_EQ(*ParseQuantityMilli("1Ki"), 1024000);
  EXPECT_EQ(*ParseQuantityMilli("1Ti"), 1'099'511'627'776'000LL);
  EXPECT_EQ(*ParseQuantityMilli("2G"), 2'000'000'000'000LL);
  EXPECT_EQ(*ParseQuantityMilli("1e3"), 1'000'000);
}

TEST(kubeQuantity, RefusesWhatIsNotAQuantity) {
  for (const char* bad : {"lots", "", "-1", "1Xi", "12 ", "Gi", "1e40", "nan"}) {
    EXPECT_EQ(ParseQuantityMilli(bad).status().code(), Code::kInvalidArgument) << bad;
  }
}

TEST(kubeQuantity, CanonicalTextParsesBackToItself) {
  for (const char* text : {"250m", "2", "1k", "1Gi", "1536Mi", "3G"}) {
    const bool binary = std::string_view(text).ends_with('i');
    EXPECT_EQ(FormatQuantityMilli(*ParseQuantityMilli(text), binary), text);
  }
}

}  // namespace
}  // namespace septa::kube
