#include "tenancy/host/names.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "common/text.h"

namespace septa::tenancy::host {
namespace {

TEST(HostNames, Sha256HexIsTheStandardDigest) {
  EXPECT_EQ(Sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(HostNames, SafeConcatMatchesVClusterExamples) {
  // SYNCER-FACTS.md "Host names" (the hash checked with sha256sum).
  EXPECT_EQ(SafeConcat({"my-pod", "x", "default", "x", "my-vcluster"}), "my-pod-x-default-x-my-vcluster");
  EXPECT_EQ(
      SafeConcat({"a-very-long-deployment-name-abcdef-7f9c8d6b5-xk2lp", "x", "team-ml-training", "x", "tenant-a"}),
      "a-very-long-deployment-name-abcdef-7f9c8d6b5-xk2lp-x-5f4b7f4cbb");
  // A '.' as the 52nd character: ".-" becomes "-", 62 characters.
  const std::string dotted = std::string(51, 'a') + ".b" + std::string(20, 'c');
  const std::string hashed = SafeConcat({dotted});
  EXPECT_EQ(hashed.size(), 62u);
  EXPECT_EQ(hashed, std::string(51, 'a') + "-" + Sha256Hex(dotted).substr(0, 10));
}

TEST(HostNames, HostNamespaceIsReadableWhenItFits) {
  EXPECT_EQ(HostNamespaceName("acme", "train"), "septa-acme-x-train");
  // "kube" + "system" cannot become the host's kube-system.
  EXPECT_EQ(HostNamespaceName("kube", "system"), "septa-kube-x-system");
  const std::string fits = HostNamespaceName(std::string(26, 't'), std::string(28, 'v'));
  EXPECT_EQ(fits.size(), 63u);
  EXPECT_EQ(fits, "septa-" + std::string(26, 't') + "-x-" + std::string(28, 'v'));
}

TEST(HostNames, HostNamespaceIsHashedPast63Characters) {
  const std::string tenant(40, 't');
  const std::string vcluster(40, 'v');
  const std::string name = HostNamespaceName(tenant, vcluster);
  // The first 52 characters of the plain name, '-', 10 hex digits of "<tenant>/<vcluster>".
  EXPECT_EQ(name, ("septa-" + tenant).substr(0, 46) + "-x-" + std::string(3, 'v') + "-" +
                      Sha256Hex(tenant + "/" + vcluster).substr(0, 10));
  EXPECT_EQ(name.size(), 63u);
  EXPECT_TRUE(IsDns1123Label(name));
  // Sha256Hex("acme/train") checked with sha256sum: the hash is of the pair, not the joined text.
  EXPECT_EQ(Sha256Hex("acme/train").substr(0, 10), "2e42cf5acd");
  // A cut that ends in '-' drops it: no "--" before the hash.
  const std::string vc_with_dash = "bb-" + std::string(37, 'c');
  const std::string cut_at_dash = HostNamespaceName(std::string(40, 'a'), vc_with_dash);
  EXPECT_EQ(cut_at_dash, "septa-" + std::string(40, 'a') + "-x-bb-" +
                             Sha256Hex(std::string(40, 'a') + "/" + vc_with_dash).substr(0, 10));
  EXPECT_TRUE(IsDns1123Label(cut_at_dash)) << cut_at_dash;
}

TEST(HostNames, HostNamespaceNeverCollides) {
  // Pairs whose plain joins read alike, and long pairs that share the first
  // 52 characters, all get different names.
  EXPECT_NE(HostNamespaceName("a-x", "b"), HostNamespaceName("a", "x-b"));
  EXPECT_NE(HostNamespaceName(std::string(40, 'a'), std::string(39, 'b') + "c"),
            HostNamespaceName(std::string(40, 'a'), std::string(39, 'b') + "d"));
  // Every pair of names of up to 4 characters over {a, x, -}: all distinct and valid.
  std::vector<std::string> names;
  std::vector<std::string> frontier = {""};
  for (int len = 1; len <= 4; ++len) {
    std::vector<std::string> next;
    for (const std::string& prefix : frontier) {
      for (char c : {'a', 'x', '-'}) next.push_back(prefix + c);
    }
    for (const std::string& n : next) {
      if (IsDns1123Label(n)) names.push_back(n);
    }
    frontier = std::move(next);
  }
  ASSERT_GT(names.size(), 20u);
  std::map<std::string, std::string> seen;
  for (const std::string& t : names) {
    for (const std::string& v : names) {
      const std::string ns = HostNamespaceName(t, v);
      ASSERT_TRUE(IsDns1123Label(ns)) << t << "/" << v << " -> " << ns;
      auto [it, inserted] = seen.emplace(ns, t + "/" + v);
      EXPECT_TRUE(inserted) << ns << " for both " << it->second << " and " << t << "/" << v;
    }
  }
}

TEST(HostNames, QueueAndFlavorNames) {
  EXPECT_EQ(KaiTierQueueName("shared"), "septa-tier-shared");
  const std::string h100 = GpuFlavorName("NVIDIA-H100-80GB-HBM3");
  EXPECT_EQ(h100, "septa-gpu-nvidia-h100-80gb-hbm3-" + Sha256Hex("NVIDIA-H100-80GB-HBM3").substr(0, 6));
  EXPECT_NE(GpuFlavorName("NVIDIA-A100-PCIe-40GB"), GpuFlavorName("NVIDIA-A100-PCIE-40GB"));
  const std::string odd = GpuFlavorName("NVIDIA_" + std::string(80, 'X') + "..");
  EXPECT_LE(odd.size(), 63u);
  EXPECT_TRUE(IsDns1123Label(odd)) << odd;
  EXPECT_EQ(GpuFlavorName("NVIDIA-H100-80GB-HBM3"), h100);  // stable
}

}  // namespace
}  // namespace septa::tenancy::host
