#include "tenancy/api_limits.h"

#include <gtest/gtest.h>

namespace septa::tenancy {
namespace {

TEST(ValidateApiLimits, AbsentIsTheTiersDefaultZeroAllowsNoneAndEachMemberIsBounded) {
  EXPECT_TRUE(ValidateApiLimits("api_limits", ApiLimits{}).ok());
  EXPECT_TRUE(ValidateApiLimits("api_limits", ApiLimits{0, 0, 0, 0}).ok());
  EXPECT_TRUE(ValidateApiLimits("api_limits",
                                ApiLimits{kMaxApiObjects, kMaxApiObjectBytes, kMaxApiWatches, kMaxApiRequestsInFlight})
                  .ok());
  const struct {
    ApiLimits limits;
    std::string field;
  } bad[] = {
      {{-1, {}, {}, {}}, "api_limits.objects"},
      {{kMaxApiObjects + 1, {}, {}, {}}, "api_limits.objects"},
      {{{}, -1, {}, {}}, "api_limits.object_bytes"},
      {{{}, kMaxApiObjectBytes + 1, {}, {}}, "api_limits.object_bytes"},
      {{{}, {}, kMaxApiWatches + 1, {}}, "api_limits.watches"},
      {{{}, {}, {}, -5}, "api_limits.requests_in_flight"},
  };
  for (const auto& b : bad) {
    Status st = ValidateApiLimits("api_limits", b.limits);
    ASSERT_FALSE(st.ok()) << b.field;
    EXPECT_EQ(st.code(), Code::kInvalidArgument);
    ASSERT_EQ(st.violations().size(), 1u);
    EXPECT_EQ(st.violations()[0].field, b.field);
  }
  EXPECT_EQ(ValidateApiLimits("api_limits", {{}, {}, {}, -5}).violations()[0].description,
            "must be between 0 and 1000000 (absent: the trust tier's default), got -5");
  EXPECT_EQ(ValidateApiLimits("tier.api_limits", {-1, {}, {}, {}}).violations()[0].field, "tier.api_limits.objects");
}

TEST(EffectiveApiLimits, EachOverrideReplacesItsMemberOnlyAndAbsentEverywhereIsUnlimited) {
  const ApiLimits tier{5000, 64 << 20, 200, 32};
  EXPECT_EQ(EffectiveApiLimits(tier, {}), tier);
  EXPECT_EQ(EffectiveApiLimits(tier, {{}, {}, 5, {}}), (ApiLimits{5000, 64 << 20, 5, 32}));
  EXPECT_EQ(EffectiveApiLimits(tier, {0, 1, {}, 100}), (ApiLimits{0, 1, 200, 100}));
  EXPECT_EQ(EffectiveApiLimits({}, {{}, {}, 5, {}}), (ApiLimits{{}, {}, 5, {}}));
}

}  // namespace
}  // namespace septa::tenancy
