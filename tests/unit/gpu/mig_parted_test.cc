#include "gpu/mig_parted.h"

#include <gtest/gtest.h>

#include "tests/support/hostile_documents.h"

namespace septa::gpu {
namespace {

constexpr const char* kFactsExample = R"(
version: v1
mig-configs:
  all-disabled:
    - devices: all
      mig-enabled: false
  all-balanced:
    - device-filter: ["0x233010DE"]
      devices: all
      mig-enabled: true
      mig-devices: {"1g.10gb": 2, "2g.20gb": 1, "3g.40gb": 1}
  custom:
    - devices: [0, 1]
      mig-enabled: false
    - devices: [2, 3]
      mig-enabled: true
      mig-devices: {"3g.40gb": 2}
)";

TEST(MigParted, ParsesTheDocumentedExample) {
  Result<MigPartedConfig> parsed = ParseMigParted(kFactsExample, "config.yaml");
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  const auto& configs = parsed->configs;
  ASSERT_EQ(configs.size(), 3u);
  const MigDeviceGroup& balanced = configs.at("all-balanced").at(0);
  EXPECT_EQ(balanced.device_filter, (std::vector<std::string>{"0x233010DE"}));
  EXPECT_TRUE(balanced.all_devices);
  EXPECT_TRUE(balanced.mig_enabled);
  EXPECT_EQ(balanced.mig_devices,
            (std::vector<std::pair<std::string, int>>{{"1g.10gb", 2}, {"2g.20gb", 1}, {"3g.40gb", 1}}));
  const auto& custom = configs.at("custom");
  ASSERT_EQ(custom.size(), 2u);
  EXPECT_FALSE(custom[0].all_devices);
  EXPECT_EQ(custom[1].devices, (std::vector<int>{2, 3}));

  const GpuModel& h100 = *Catalog::Default().Find("H100-80GB");
  EXPECT_EQ(GroupFor(*parsed, "custom", h100, 1), &custom[0]);
  EXPECT_EQ(GroupFor(*parsed, "custom", h100, 3), &custom[1]);
  EXPECT_EQ(GroupFor(*parsed, "custom", h100, 4), nullptr);
  EXPECT_EQ(GroupFor(*parsed, "all-balanced", *Catalog::Default().Find("A100-40GB"), 0), nullptr);
  EXPECT_EQ(GroupFor(*parsed, "all-balanced", h100, 0), &balanced);
}

TEST(MigParted, RenderRoundTrips) {
  Result<MigPartedConfig> parsed = ParseMigParted(kFactsExample, "config.yaml");
  ASSERT_TRUE(parsed.ok());
  const std::string text = RenderMigParted(*parsed);
  Result<MigPartedConfig> again = ParseMigParted(text, "rendered");
  ASSERT_TRUE(again.ok()) << again.status().ToString() << "\n" << text;
  EXPECT_EQ(*again, *parsed);
}

TEST(MigParted, StockConfigs) {
  const MigPartedConfig stock = StockMigPartedConfigs(Catalog::Default());
  EXPECT_FALSE(stock.configs.at("all-disabled").at(0).mig_enabled);
  const GpuModel& h100 = *Catalog::Default().Find("H100-80GB");
  const MigDeviceGroup* balanced = GroupFor(stock, "all-balanced", h100, 0);
  ASSERT_NE(balanced, nullptr);
  EXPECT_EQ(balanced->mig_devices,
            (std::vector<std::pair<std::string, int>>{{"1g.10gb", 2}, {"2g.20gb", 1}, {"3g.40gb", 1}}));
  const MigDeviceGroup* a30 = GroupFor(stock, "all-balanced", *Catalog::Default().Find("A30-24GB"), 0);
  ASSERT_NE(a30, nullptr);
  EXPECT_EQ(a30->mig_devices, (std::vector<std::pair<std::string, int>>{{"1g.6gb", 2}, {"2g.12gb", 1}}));
  const MigDeviceGroup* small = GroupFor(stock, "all-1g.10gb", h100, 0);
  ASSERT_NE(small, nullptr);
  EXPECT_EQ(small->mig_devices.at(0).second, 7);
  EXPECT_EQ(GroupFor(stock, "all-3g.40gb", h100, 0)->mig_devices.at(0).second, 2);
  EXPECT_NE(GroupFor(stock, "all-1g.10gb.me", h100, 0), nullptr);
  // The stock document itself parses.
  EXPECT_TRUE(ParseMigParted(RenderMigParted(stock), "stock").ok());
}

TEST(MigParted, ErrorsNameTheField) {
  Result<MigPartedConfig> no_version = ParseMigParted("mig-configs: {}\n", "a.yaml");
  ASSERT_FALSE(no_version.ok());
  EXPECT_EQ(no_version.status().violations().at(0).field, "version");
  Result<MigPartedConfig> bad_count = ParseMigParted(
      "version: v1\nmig-configs:\n  x:\n    - devices: all\n      mig-enabled: true\n      mig-devices: {\"1g.10gb\": "
      "many}\n",
      "b.yaml");
  ASSERT_FALSE(bad_count.ok());
  EXPECT_EQ(bad_count.status().violations().at(0).field, "mig-configs.x[0].mig-devices.1g.10gb");
  Result<MigPartedConfig> no_enabled =
      ParseMigParted("version: v1\nmig-configs:\n  x:\n    - devices: all\n", "c.yaml");
  ASSERT_FALSE(no_enabled.ok());
  EXPECT_EQ(no_enabled.status().violations().at(0).field, "mig-configs.x[0].mig-enabled");
  EXPECT_FALSE(
      ParseMigParted("version: v1\nmig-configs:\n  x:\n    - devices: first\n      mig-enabled: false\n", "d").ok());
}

TEST(MigParted, SetupForAGpuPlacesItsGroupsInstances) {
  const Catalog& catalog = Catalog::Default();
  const GpuModel& h100 = *catalog.Find("H100-80GB");
  MigPartedConfig config = *ParseMigParted(kFactsExample, "config.yaml");

  auto custom2 = MigSetupFor(config, "custom", h100, 2);
  ASSERT_TRUE(custom2.ok()) << custom2.status().ToString();
  EXPECT_TRUE(custom2->mig_enabled);
  EXPECT_EQ(LayoutToString(h100, custom2->layout), "3g.40gb@0 3g.40gb@4");
  auto custom0 = MigSetupFor(config, "custom", h100, 0);
  ASSERT_TRUE(custom0.ok());
  EXPECT_FALSE(custom0->mig_enabled);
  EXPECT_TRUE(custom0->layout.empty());
  auto unlisted = MigSetupFor(config, "custom", h100, 5);
  ASSERT_TRUE(unlisted.ok());
  EXPECT_FALSE(unlisted->mig_enabled) << "no group applies to GPU 5";

  auto balanced = MigSetupFor(StockMigPartedConfigs(catalog), "all-balanced", h100, 7);
  ASSERT_TRUE(balanced.ok());
  EXPECT_EQ(LayoutToString(h100, balanced->layout), "3g.40gb@4 2g.20gb@2 1g.10gb@0 1g.10gb@1");

  EXPECT_EQ(MigSetupFor(config, "nope", h100, 0).status().code(), Code::kNotFound);
  const GpuModel& a100 = *catalog.Find("A100-40GB");
  auto wrong_model = MigSetupFor(config, "custom", a100, 2);
  EXPECT_EQ(wrong_model.status().code(), Code::kInvalidArgument);
  EXPECT_NE(wrong_model.status().message().find("no MIG profile \"3g.40gb\""), std::string::npos)
      << wrong_model.status().message();
  auto overfull = ParseMigParted(
      "version: v1\nmig-configs:\n  big:\n    - devices: all\n      mig-enabled: true\n"
      "      mig-devices: {\"3g.40gb\": 3}\n",
      "d");
  ASSERT_TRUE(overfull.ok());
  EXPECT_EQ(MigSetupFor(*overfull, "big", h100, 0).status().code(), Code::kInvalidArgument);
}

// A host's mig-parted ConfigMap is read within the document bounds
// (common/documents.h).
TEST(MigParted, AnAliasBombIsRefused) {
  auto config = ParseMigParted("version: v1\n" + test::YamlAliasBomb(5), "cm");
  ASSERT_FALSE(config.ok());
  EXPECT_NE(config.status().message().find("cm: the document expands excessively through aliases"), std::string::npos)
      << config.status().message();
}

}  // namespace
}  // namespace septa::gpu
