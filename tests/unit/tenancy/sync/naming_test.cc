// Host names (SYNCER-FACTS "Host names") and the trusted reverse mapping.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <set>
#include <string>

#include "tenancy/sync/bookkeeping.h"

namespace septa::tenancy::sync {
namespace {

bool IsDnsLabel(const std::string& s) {
  if (s.empty() || s.size() > 63) return false;
  for (char c : s) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-')) return false;
  }
  return s.front() != '-' && s.back() != '-';
}

bool IsDnsSubdomain(const std::string& s) {
  if (s.empty() || s.size() > 253) return false;
  std::size_t start = 0;
  while (start <= s.size()) {
    const std::size_t end = std::min(s.find('.', start), s.size());
    if (!IsDnsLabel(s.substr(start, end - start))) return false;
    start = end + 1;
  }
  return true;
}

TEST(SyncNames, MatchTheFactsExamples) {
  EXPECT_EQ(HostObjectName("my-pod", "default", "my-vcluster"), "my-pod-x-default-x-my-vcluster");
  EXPECT_EQ(HostObjectName("a-very-long-deployment-name-abcdef-7f9c8d6b5-xk2lp", "team-ml-training", "tenant-a"),
            "a-very-long-deployment-name-abcdef-7f9c8d6b5-xk2lp-x-5f4b7f4cbb");
}

// Generated valid virtual names (DNS-1123 subdomains, dots included, as pod
// and config map names may be): host names are valid, stable and distinct.
TEST(SyncNames, GeneratedNamesAreValidDeterministicAndDistinct) {
  std::mt19937 random(11);  // fixed seed: the same sample every run
  const std::string alphabet = "abcdefghijklmnopqrstuvwxyz0123456789";
  auto label = [&](int max) {
    std::uniform_int_distribution<int> length(1, max);
    std::uniform_int_distribution<int> pick(0, static_cast<int>(alphabet.size()) - 1);
    std::string s;
    const int n = length(random);
    for (int i = 0; i < n; ++i) {
      const bool inner = i > 0 && i < n - 1;
      s += inner && random() % 7 == 0 ? '-' : alphabet[pick(random)];
    }
    return s;
  };
  std::set<std::string> inputs;
  std::set<std::string> outputs;
  for (int i = 0; i < 20000; ++i) {
    std::string name = label(40);
    while (random() % 3 == 0) name += "." + label(30);  // dots: the vCluster pain point
    const std::string ns = label(20);
    const std::string vc = label(20);
    const std::string host = HostObjectName(name, ns, "vc-" + vc);
    EXPECT_TRUE(IsDnsSubdomain(host)) << host;
    EXPECT_LE(host.size(), 63u) << host;
    EXPECT_EQ(host, HostObjectName(name, ns, "vc-" + vc));
    if (inputs.insert(name + "/" + ns + "/" + vc).second) outputs.insert(host);
  }
  // "-x-" joins can make two inputs equal as text (vCluster's scheme); the
  // sample has none, and hashed names do not collide.
  EXPECT_EQ(outputs.size(), inputs.size());
}

nlohmann::json TrustedHostObject() {
  return {{"metadata",
           {{"name", "web-x-team-x-train"},
            {"namespace", "septa-acme-x-train"},
            {"labels", {{"septa.dev/synced", "true"}, {"septa.dev/tenant", "acme"}, {"septa.dev/vcluster", "train"}}},
            {"annotations",
             {{"septa.dev/object-name", "web"},
              {"septa.dev/object-namespace", "team"},
              {"septa.dev/object-uid", "u1"},
              {"septa.dev/host-name", "web-x-team-x-train"},
              {"septa.dev/host-namespace", "septa-acme-x-train"}}}}}};
}

TEST(SyncNames, VirtualRefOfTrustsMatchingBookkeeping) {
  EXPECT_EQ(VirtualRefOf(TrustedHostObject(), "acme", "train"), (VirtualRef{"team", "web", "u1"}));
}

TEST(SyncNames, VirtualRefOfDistrustsOtherClustersAndCopies) {
  EXPECT_FALSE(VirtualRefOf(TrustedHostObject(), "acme", "other"));
  EXPECT_FALSE(VirtualRefOf(TrustedHostObject(), "other", "train"));
  auto unsynced = TrustedHostObject();
  unsynced["metadata"]["labels"].erase("septa.dev/synced");
  EXPECT_FALSE(VirtualRefOf(unsynced, "acme", "train"));
  // Annotations copied onto another object (a kubectl get -o yaml | apply).
  auto copied = TrustedHostObject();
  copied["metadata"]["name"] = "imposter";
  EXPECT_FALSE(VirtualRefOf(copied, "acme", "train"));
  auto moved = TrustedHostObject();
  moved["metadata"]["namespace"] = "septa-evil-x-train";
  EXPECT_FALSE(VirtualRefOf(moved, "acme", "train"));
  auto no_uid = TrustedHostObject();
  no_uid["metadata"]["annotations"].erase("septa.dev/object-uid");
  EXPECT_FALSE(VirtualRefOf(no_uid, "acme", "train"));
}

}  // namespace
}  // namespace septa::tenancy::sync
