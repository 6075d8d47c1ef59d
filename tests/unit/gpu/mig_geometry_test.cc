#include "gpu/mig_geometry.h"

#include <gtest/gtest.h>

namespace septa::gpu {
namespace {

class Geometry : public ::testing::TestWithParam<const char*> {
 protected:
  const GpuModel& model() const { return *Catalog::Default().Find(GetParam()); }
  // Profile index by kind: "1g", "1g+me", "1g2" (double memory), "2g", "3g", "4g", "7g".
  int Kind(std::string_view kind) const {
    for (std::size_t i = 0; i < model().mig_profiles.size(); ++i) {
      const MigProfile& p = model().mig_profiles[i];
      const std::string prefix = p.name.substr(0, 2);
      const bool me = p.media_extensions;
      if (kind == "1g+me" && me) return static_cast<int>(i);
      if (me) continue;
      if (kind == "1g2" && prefix == "1g" && p.memory_slices == 2) return static_cast<int>(i);
      if (kind == "1g" && prefix == "1g" && p.memory_slices == 1) return static_cast<int>(i);
      if (kind.size() == 2 && kind != "1g" && prefix == kind) return static_cast<int>(i);
    }
    ADD_FAILURE() << "no profile kind " << kind;
    return 0;
  }
  MigLayout L(std::initializer_list<std::pair<const char*, int>> items) const {
    MigLayout out;
    for (auto [kind, start] : items) out.push_back({Kind(kind), start});
    return out;
  }
};

TEST_P(Geometry, ValidExamplesOfTheFacts) {
  const std::vector<MigLayout> valid = {
      L({{"1g", 0}, {"1g", 1}, {"2g", 2}, {"3g", 4}}),
      L({{"2g", 0}, {"1g", 2}, {"1g", 3}, {"1g", 4}, {"1g", 5}, {"1g", 6}}),
      L({{"3g", 0}, {"3g", 4}}),
      L({{"4g", 0}, {"3g", 4}}),
      L({{"4g", 0}, {"2g", 4}, {"1g", 6}}),
      L({{"4g", 0}, {"1g", 4}, {"1g", 5}, {"1g", 6}}),
      L({{"2g", 0}, {"2g", 2}, {"2g", 4}, {"1g", 6}}),
      L({{"1g2", 0}, {"1g2", 2}, {"1g2", 4}, {"1g2", 6}}),
      L({{"7g", 0}}),
      L({{"1g+me", 3}, {"1g", 0}}),
  };
  for (const MigLayout& layout : valid) {
    EXPECT_TRUE(ValidateLayout(model(), layout).ok()) << LayoutToString(model(), layout);
  }
}

TEST_P(Geometry, InvalidExamplesOfTheFacts) {
  const std::vector<MigLayout> invalid = {
      L({{"3g", 0}, {"3g", 4}, {"1g", 0}}),  // 3g+3g+1g: two 3g use all 8 slices
      L({{"3g", 0}, {"3g", 4}, {"1g", 6}}),
      L({{"7g", 0}, {"1g", 0}}),  // 7g + anything
      L({{"7g", 0}, {"1g", 7 - 1}}),
      L({{"1g+me", 0}, {"1g+me", 1}}),  // two +me
      L({{"3g", 2}}),                   // start not allowed
      L({{"4g", 4}}),
      L({{"2g", 6}}),
      L({{"2g", 0}, {"1g", 1}}),  // overlap
  };
  for (const MigLayout& layout : invalid) {
    EXPECT_FALSE(ValidateLayout(model(), layout).ok()) << LayoutToString(model(), layout);
  }
}

TEST_P(Geometry, FreePlacements) {
  EXPECT_EQ(FreePlacements(model(), {}, Kind("3g")), (std::vector<int>{0, 4}));
  EXPECT_EQ(FreePlacements(model(), L({{"1g", 1}}), Kind("3g")), (std::vector<int>{4}));
  EXPECT_EQ(FreePlacements(model(), L({{"1g", 1}, {"1g", 5}}), Kind("3g")), (std::vector<int>{}));
  EXPECT_EQ(FreePlacements(model(), L({{"3g", 4}}), Kind("2g")), (std::vector<int>{0, 2}));
  EXPECT_EQ(FreePlacements(model(), L({{"1g+me", 0}}), Kind("1g+me")), (std::vector<int>{}));
  EXPECT_EQ(FreePlacements(model(), L({{"7g", 0}}), Kind("1g")), (std::vector<int>{}));
}

TEST_P(Geometry, MaximalLayoutsAreValidAndMaximal) {
  const std::vector<MigLayout> layouts = MaximalLayouts(model());
  ASSERT_FALSE(layouts.empty());
  bool has_3g_3g = false;
  for (const MigLayout& layout : layouts) {
    EXPECT_TRUE(ValidateLayout(model(), layout).ok()) << LayoutToString(model(), layout);
    for (std::size_t p = 0; p < model().mig_profiles.size(); ++p) {
      EXPECT_TRUE(FreePlacements(model(), layout, static_cast<int>(p)).empty())
          << LayoutToString(model(), layout) << " + " << model().mig_profiles[p].name;
    }
    has_3g_3g |= layout == L({{"3g", 0}, {"3g", 4}});
  }
  EXPECT_TRUE(has_3g_3g);
  EXPECT_NE(std::find(layouts.begin(), layouts.end(), L({{"7g", 0}})), layouts.end());
}

TEST_P(Geometry, CreationOrderIsLargestFirst) {
  const MigLayout order = CreationOrder(model(), L({{"1g", 0}, {"1g", 1}, {"2g", 2}, {"3g", 4}}));
  EXPECT_EQ(order, L({{"3g", 4}, {"2g", 2}, {"1g", 0}, {"1g", 1}}));
}

TEST_P(Geometry, PlaceCountsFindsAGeometryWhenOneExists) {
  std::vector<int> counts(model().mig_profiles.size(), 0);
  counts[Kind("3g")] = 1;
  counts[Kind("2g")] = 1;
  counts[Kind("1g")] = 2;
  Result<MigLayout> placed = PlaceCounts(model(), counts);
  ASSERT_TRUE(placed.ok());
  EXPECT_TRUE(ValidateLayout(model(), *placed).ok());
  EXPECT_EQ(placed->size(), 4u);
  counts[Kind("3g")] = 2;
  EXPECT_FALSE(PlaceCounts(model(), counts).ok());
}

INSTANTIATE_TEST_SUITE_P(EightSliceModels, Geometry,
                         ::testing::Values("A100-40GB", "A100-80GB", "H100-80GB", "H100-94GB", "H100-96GB",
                                           "H200-141GB", "B200-180GB"));

TEST(GeometryA30, FourSlices) {
  const GpuModel& a30 = *Catalog::Default().Find("A30-24GB");
  const int one = a30.ProfileIndex("1g.6gb"), two = a30.ProfileIndex("2g.12gb"), four = a30.ProfileIndex("4g.24gb");
  EXPECT_TRUE(ValidateLayout(a30, {{two, 0}, {two, 2}}).ok());
  EXPECT_TRUE(ValidateLayout(a30, {{one, 0}, {one, 1}, {two, 2}}).ok());
  EXPECT_FALSE(ValidateLayout(a30, {{two, 1}}).ok());
  EXPECT_FALSE(ValidateLayout(a30, {{four, 0}, {one, 0}}).ok());
  EXPECT_EQ(FreePlacements(a30, {{one, 0}}, two), (std::vector<int>{2}));
  for (const MigLayout& layout : MaximalLayouts(a30)) EXPECT_TRUE(ValidateLayout(a30, layout).ok());
}

TEST(GeometryNonMig, RefusesLayouts) {
  EXPECT_FALSE(ValidateLayout(*Catalog::Default().Find("T4"), {}).ok());
  EXPECT_TRUE(MaximalLayouts(*Catalog::Default().Find("T4")).empty());
}

}  // namespace
}  // namespace septa::gpu
