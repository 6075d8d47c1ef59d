#include "gpu/catalog.h"

#include <gtest/gtest.h>

#include "tests/support/hostile_documents.h"

namespace septa::gpu {
namespace {

TEST(Catalog, HasEveryRequiredModel) {
  const Catalog& c = Catalog::Default();
  for (const char* name : {"A100-40GB", "A100-80GB", "H100-80GB", "H100-94GB", "H100-96GB", "H200-141GB", "B200-180GB",
                           "A30-24GB", "T4", "P100", "V100M16", "V100M32", "A10", "G2", "G3"}) {
    EXPECT_NE(c.Find(name), nullptr) << name;
  }
  EXPECT_EQ(c.Find("H100"), nullptr);
}

TEST(Catalog, MigFactsOfH100) {
  const GpuModel* h100 = Catalog::Default().Find("H100-80GB");
  ASSERT_NE(h100, nullptr);
  EXPECT_TRUE(h100->mig_capable);
  EXPECT_EQ(h100->memory_slices, 8);
  const MigProfile* p = h100->FindProfile("3g.40gb");
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->profile_id, 9);
  EXPECT_EQ(p->memory_slices, 4);
  EXPECT_EQ(p->compute_slices, 3);
  EXPECT_EQ(p->sms, 60);
  EXPECT_EQ(p->max_count, 2);
  EXPECT_EQ(p->starts, (std::vector<int>{0, 4}));
  EXPECT_EQ(p->memory_mib, 40448);  // 39.50 GiB
  EXPECT_TRUE(h100->FindProfile("1g.10gb+me")->media_extensions);
  EXPECT_EQ(h100->FindProfile("1g.20gb")->starts, (std::vector<int>{0, 2, 4, 6}));
  EXPECT_EQ(h100->FindProfile("7g.80gb")->memory_slices, 8);
  EXPECT_TRUE(h100->FindProfile("3g.40gb")->unconfirmed.empty());
}

TEST(Catalog, A30HasFourSlices) {
  const GpuModel* a30 = Catalog::Default().Find("A30-24GB");
  ASSERT_NE(a30, nullptr);
  EXPECT_EQ(a30->memory_slices, 4);
  EXPECT_EQ(a30->FindProfile("2g.12gb")->starts, (std::vector<int>{0, 2}));
  EXPECT_EQ(a30->FindProfile("1g.6gb+me")->profile_id, 21);
  EXPECT_EQ(a30->FindProfile("4g.24gb")->memory_slices, 4);
}

TEST(Catalog, UnconfirmedValuesStayMarked) {
  const GpuModel* b200 = Catalog::Default().Find("B200-180GB");
  ASSERT_NE(b200, nullptr);
  const auto& u = b200->FindProfile("3g.90gb")->unconfirmed;
  EXPECT_NE(std::find(u.begin(), u.end(), "starts"), u.end());
  const auto& h200 = Catalog::Default().Find("H200-141GB")->FindProfile("1g.18gb")->unconfirmed;
  EXPECT_NE(std::find(h200.begin(), h200.end(), "id"), h200.end());
}

TEST(Catalog, NonMigModels) {
  const GpuModel* t4 = Catalog::Default().Find("T4");
  ASSERT_NE(t4, nullptr);
  EXPECT_FALSE(t4->mig_capable);
  EXPECT_TRUE(t4->mig_profiles.empty());
}

TEST(Catalog, LookupByProductLabel) {
  const Catalog& c = Catalog::Default();
  EXPECT_EQ(c.FindByProduct("NVIDIA-H100-80GB-HBM3")->name, "H100-80GB");
  EXPECT_EQ(c.FindByProduct("NVIDIA-A100-SXM4-40GB")->name, "A100-40GB");
  EXPECT_EQ(c.FindByProduct("NVIDIA-A100-SXM4-80GB")->name, "A100-80GB");
  EXPECT_EQ(c.FindByProduct("NVIDIA-A100-80GB-PCIe")->name, "A100-80GB");
  EXPECT_EQ(c.FindByProduct("NVIDIA-H100-NVL")->name, "H100-94GB");
  EXPECT_EQ(c.FindByProduct("NVIDIA-A10")->name, "A10");
  EXPECT_EQ(c.FindByProduct("Tesla-V100-SXM2-32GB")->name, "V100M32");
  EXPECT_EQ(c.FindByProduct("NVIDIA-H100-80GB-HBM3-MIG-3g.40gb")->name, "H100-80GB");
  EXPECT_EQ(c.FindByProduct("Tesla-T4-SHARED")->name, "T4");
  EXPECT_EQ(c.FindByProduct("NVIDIA-Z9000"), nullptr);
}

TEST(Catalog, GlobMatching) {
  EXPECT_TRUE(ProductPatternMatches("Tesla-V100-*16GB*", "Tesla-V100-PCIE-16GB"));
  EXPECT_TRUE(ProductPatternMatches("a*c", "ABBBC"));
  EXPECT_FALSE(ProductPatternMatches("a*c", "abd"));
  EXPECT_FALSE(ProductPatternMatches("NVIDIA-A10", "NVIDIA-A100-SXM4-40GB"));
}

TEST(Catalog, MergeOverridesAndExtends) {
  Catalog c = Catalog::Default();
  const std::size_t before = c.models().size();
  ASSERT_TRUE(c.Merge(R"(
models:
  - {name: T4, products: ["Tesla-T4"], memory_mib: 16000, sms: 40}
  - name: X1-16GB
    products: ["ACME-X1*"]
    memory_mib: 16384
    mig: {memory_slices: 2, compute_slices: 2}
    profiles:
      - {name: 1g.8gb, compute: 1, slices: 1, memory_gib: 8, max: 2, starts: [0, 1]}
)",
                      "override.yaml")
                  .ok());
  EXPECT_EQ(c.models().size(), before + 1);
  EXPECT_EQ(c.Find("T4")->memory_mib, 16000);
  EXPECT_EQ(c.FindByProduct("ACME-X1-PCIe")->name, "X1-16GB");
  EXPECT_EQ(c.Find("X1-16GB")->FindProfile("1g.8gb")->memory_mib, 8192);
}

TEST(Catalog, BadDocumentsNameTheField) {
  Result<Catalog> missing = Catalog::FromYaml("models:\n  - {name: Q, sms: 1}\n", "admin.yaml");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("admin.yaml"), std::string::npos);
  EXPECT_EQ(missing.status().violations().at(0).field, "models[0][Q].memory_mib");

  Result<Catalog> bad_start = Catalog::FromYaml(R"(
models:
  - name: Q
    memory_mib: 1
    mig: {memory_slices: 8, compute_slices: 7}
    profiles: [{name: 3g, compute: 3, slices: 4, memory_gib: 1, max: 2, starts: [0, 6]}]
)",
                                                "admin.yaml");
  ASSERT_FALSE(bad_start.ok());
  EXPECT_EQ(bad_start.status().violations().at(0).field, "models[0][Q].profiles[0].starts");

  EXPECT_FALSE(Catalog::FromYaml("models: [", "broken.yaml").ok());
  EXPECT_FALSE(Catalog::FromYaml("models:\n  - {name: Q, memory_mib: lots}\n", "x").ok());
}

// An administrator's catalog is read within the document bounds too
// (common/documents.h).
TEST(Catalog, AnAliasBombIsRefused) {
  auto catalog = Catalog::FromYaml(test::YamlAliasBomb(5), "admin.yaml");
  ASSERT_FALSE(catalog.ok());
  EXPECT_NE(catalog.status().message().find("admin.yaml: the document expands excessively through aliases"),
            std::string::npos)
      << catalog.status().message();
}

}  // namespace
}  // namespace septa::gpu
