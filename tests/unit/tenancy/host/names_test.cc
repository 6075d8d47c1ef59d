#include "tenancy/host/names.h"

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <set>
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
  // The first 49 characters of the plain name (less a trailing '-'), "-x-",
  // 11 hex digits of "<tenant>/<vcluster>".
  // Here the cut ended in the separator's '-': 62 characters.
  EXPECT_EQ(name, "septa-" + tenant + "-x-x-" + Sha256Hex(tenant + "/" + vcluster).substr(0, 11));
  EXPECT_EQ(name.size(), 62u);
  EXPECT_EQ(HostNamespaceName(std::string(39, 't'), vcluster).size(), 63u);
  EXPECT_TRUE(IsDns1123Label(name));
  // Sha256Hex("acme/train") checked with sha256sum: the hash is of the pair, not the joined text.
  EXPECT_EQ(Sha256Hex("acme/train").substr(0, 11), "2e42cf5acdf");
  // A shorter tenant keeps some of the virtual cluster's name; a cut that ends in '-' drops it.
  const std::string vc_with_dash = "bbbbbbbbb-" + std::string(30, 'c');
  EXPECT_EQ(HostNamespaceName(std::string(30, 'a'), vc_with_dash),
            "septa-" + std::string(30, 'a') + "-x-bbbbbbbbb-x-" +
                Sha256Hex(std::string(30, 'a') + "/" + vc_with_dash).substr(0, 11));
  // Two "-x-" in a short name: hashed too, the whole text kept.
  EXPECT_EQ(HostNamespaceName("a", "x-b"), "septa-a-x-x-b-x-" + Sha256Hex("a/x-b").substr(0, 11));
}

// The finding M2 (../shared/docs/HOSTILE-TENANT-FINDINGS.md): the hashed
// name of one pair was the plain name of another pair of the same tenant,
// so both virtual clusters ran in one namespace.
TEST(HostNames, AHashedNameIsNeverAnotherPairsPlainName) {
  const std::string tenant = "longtenantname-abcdefghij";
  const std::string first = HostNamespaceName(tenant, "firstvcluster-abcdefghijklmnopq");
  EXPECT_EQ(first, "septa-longtenantname-abcdefghij-x-firstvcluster-a-x-" +
                       Sha256Hex(tenant + "/firstvcluster-abcdefghijklmnopq").substr(0, 11));
  // The names of the old rule's hashed form and of this one, read as a
  // tenant's plain name: each would need a virtual cluster name holding
  // "-x-", so it is hashed itself, never that text.
  for (const std::string& vc : {std::string("firstvcluster-abcd-49ffa608db"), first.substr(34)}) {
    ASSERT_TRUE(IsDns1123Label(vc, 40)) << vc;
    EXPECT_NE(HostNamespaceName(tenant, vc), first) << vc;
  }
  EXPECT_EQ(SeparatorCount(first), 2u);
}

// The names of the pairs that matter: tenants of 1, 2, 39 and 40
// characters (some holding "-x" or "-x-", some ending in "-x"), virtual
// clusters of every length from 1 to 40 whose characters around the cut
// are letters, '-' or 'x'. Each name is a DNS-1123 label of at most 63
// characters; a plain one holds "-x-" once and is "septa-<tenant>-x-<vcluster>",
// a hashed one holds it at least twice; all are distinct.
TEST(HostNames, HostNamespacesOfTheBoundaryPairsAreDistinctAndOfTheirForm) {
  std::vector<std::string> tenants = {"a",
                                      "x",
                                      "ax",
                                      "a-x",
                                      "x-a",
                                      "a-x-b",
                                      std::string(39, 'a'),
                                      std::string(37, 'a') + "-x",
                                      std::string(40, 'a'),
                                      std::string(38, 'a') + "-x",
                                      std::string(36, 'a') + "-x-a",
                                      "x" + std::string(38, '-') + "x"};
  std::set<std::string> vclusters;
  for (std::size_t len = 1; len <= 40; ++len) {
    for (const std::string& fill : {std::string("b"), std::string("x-"), std::string("-x"), std::string("b--")}) {
      std::string vc;
      while (vc.size() < len) vc += fill;
      vc.resize(len);
      vc.front() = vc.front() == '-' ? 'b' : vc.front();
      vc.back() = vc.back() == '-' ? 'b' : vc.back();
      if (IsDns1123Label(vc, 40)) vclusters.insert(vc);
    }
  }
  std::map<std::string, std::string> seen;
  std::size_t plain = 0, hashed = 0;
  for (const std::string& t : tenants) {
    ASSERT_TRUE(IsDns1123Label(t, 40)) << t;
    for (const std::string& v : vclusters) {
      const std::string ns = HostNamespaceName(t, v);
      ASSERT_TRUE(IsDns1123Label(ns)) << t << "/" << v << " -> " << ns;
      if (ns == "septa-" + t + "-x-" + v) {
        EXPECT_EQ(SeparatorCount(ns), 1u) << ns;
        ++plain;
      } else {
        EXPECT_GE(SeparatorCount(ns), 2u) << t << "/" << v << " -> " << ns;
        EXPECT_TRUE(ns.starts_with(("septa-" + t + "-x").substr(0, 48))) << ns;
        ++hashed;
      }
      auto [it, inserted] = seen.emplace(ns, t + "/" + v);
      EXPECT_TRUE(inserted) << ns << " for both " << it->second << " and " << t << "/" << v;
    }
  }
  EXPECT_GT(plain, 100u);
  EXPECT_GT(hashed, 100u);
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

// Random pairs, drawn to reach the boundaries (long names, '-' and 'x'
// often): every name is of its form, and no two pairs share one.
TEST(HostNames, HostNamespacesOfRandomPairsAreDistinct) {
  std::mt19937 random(20261128);
  const std::string alphabet = "abx-x-0";
  auto name = [&] {
    std::uniform_int_distribution<std::size_t> length(1, 40);
    std::uniform_int_distribution<std::size_t> pick(0, alphabet.size() - 1);
    std::string n(length(random), 'a');
    for (char& c : n) c = alphabet[pick(random)];
    if (n.front() == '-') n.front() = 'a';
    if (n.back() == '-') n.back() = 'b';
    return n;
  };
  std::map<std::string, std::string> seen;
  for (int i = 0; i < 50000; ++i) {
    const std::string t = name(), v = name();
    const std::string ns = HostNamespaceName(t, v);
    ASSERT_TRUE(IsDns1123Label(ns)) << t << "/" << v << " -> " << ns;
    const bool is_plain = ns == "septa-" + t + "-x-" + v;
    ASSERT_EQ(SeparatorCount(ns) == 1, is_plain) << t << "/" << v << " -> " << ns;
    auto [it, inserted] = seen.emplace(ns, t + "/" + v);
    ASSERT_TRUE(inserted || it->second == t + "/" + v) << ns << " for both " << it->second << " and " << t << "/" << v;
  }
}

TEST(HostNames, QueueAndFlavorNames) {
  EXPECT_EQ(KaiTierQueueName("shared"), "septa-tier-shared");
  // A tier queue shares its kind with the leaf queues, named after host
  // namespaces: tenant "tier-gpu"'s virtual cluster "large" must not be
  // the queue of tier "gpu-x-large".
  EXPECT_EQ(HostNamespaceName("tier-gpu", "large"), "septa-tier-gpu-x-large");
  EXPECT_EQ(KaiTierQueueName("gpu-x-large"), "septa-tierh-" + Sha256Hex("gpu-x-large").substr(0, 32));
  EXPECT_EQ(KaiTierQueueName("x-large"), "septa-tierh-" + Sha256Hex("x-large").substr(0, 32));
  EXPECT_EQ(SeparatorCount(KaiTierQueueName("gpu-x-large")), 0u);
  EXPECT_TRUE(IsDns1123Label(KaiTierQueueName(std::string(40, 'x'))));
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
