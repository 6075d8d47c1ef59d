// The syncer's typed keys: one codec for every shape, strict on the way in,
// and every key of a virtual cluster on that virtual cluster's shard.
#include "services/syncer/syncer_keys.h"

#include <gtest/gtest.h>

#include <ostream>
#include <set>
#include <string>
#include <vector>

#include "services/kube/resources.h"
#include "services/reconcile/shard.h"

namespace septa::syncer {

// Failures name keys by their text.
void PrintTo(const SyncerKey& key, std::ostream* out) { *out << EncodeSyncerKey(key); }

namespace {

const VirtualClusterRef kCluster{"acme", "train"};
// Legal and odd: DNS labels and subdomains with digits, dots and dashes;
// namespaces named like the keys' fixed parts; an event's generated name;
// a UID.
const VirtualClusterRef kOdd{"t-0", "9v.x"};

std::vector<SyncerKey> EveryShape(const VirtualClusterRef& cluster) {
  return {
      ClusterKey{cluster},
      PodKey{cluster, "default", "web-0"},
      PodKey{cluster, "events", "tokens"},
      PodKey{cluster, "nodes", "podgroups"},
      PodKey{cluster, "configmaps", "a.b-c.1"},
      ObjectKey{cluster, ObjectKind::kConfigMap, "kube-system", "app.config-v1.2"},
      ObjectKey{cluster, ObjectKind::kSecret, "events", "tokens"},
      ObjectKey{cluster, ObjectKind::kService, "nodes", "x"},
      ObjectKey{cluster, ObjectKind::kEndpoints, "default", "kubernetes"},
      ObjectKey{cluster, ObjectKind::kClaim, "data", "data-web-0"},
      EventKey{cluster, "acme-train", "web-0.17a3f9c2b1e4d5f6"},
      EventKey{cluster, "configmaps", "secrets"},
      TokenKey{cluster, "default", "3f2a9c1e-6b7d-4e8f-9a0b-1c2d3e4f5a6b"},
      NodesKey{cluster},
      PodGroupsKey{cluster},
  };
}

TEST(SyncerKeys, EveryShapeRoundTripsThroughItsText) {
  for (const VirtualClusterRef& cluster : {kCluster, kOdd}) {
    for (const SyncerKey& key : EveryShape(cluster)) {
      const std::string text = EncodeSyncerKey(key);
      const std::optional<SyncerKey> decoded = DecodeSyncerKey(text);
      ASSERT_TRUE(decoded.has_value()) << text;
      EXPECT_EQ(*decoded, key) << text;
      EXPECT_EQ(decoded->index(), key.index()) << text << ": decoded as another shape";
      EXPECT_EQ(reconcile::EncodeKey(key), text) << "the runtime's codec is this one";
      EXPECT_EQ(reconcile::DecodeKey<SyncerKey>(text), key);
    }
  }
}

// The text is what the string keys were (logs, and the tests that name keys).
TEST(SyncerKeys, TheTextOfEachShape) {
  EXPECT_EQ(EncodeSyncerKey(ClusterKey{kCluster}), "acme/train");
  EXPECT_EQ(EncodeSyncerKey(PodKey{kCluster, "default", "web"}), "acme/train/default/web");
  EXPECT_EQ(EncodeSyncerKey(ObjectKey{kCluster, ObjectKind::kConfigMap, "default", "cfg"}),
            "acme/train/configmaps/default/cfg");
  EXPECT_EQ(EncodeSyncerKey(ObjectKey{kCluster, ObjectKind::kSecret, "default", "s"}), "acme/train/secrets/default/s");
  EXPECT_EQ(EncodeSyncerKey(ObjectKey{kCluster, ObjectKind::kService, "default", "svc"}),
            "acme/train/services/default/svc");
  EXPECT_EQ(EncodeSyncerKey(ObjectKey{kCluster, ObjectKind::kEndpoints, "default", "svc"}),
            "acme/train/endpoints/default/svc");
  EXPECT_EQ(EncodeSyncerKey(ObjectKey{kCluster, ObjectKind::kClaim, "default", "data"}),
            "acme/train/persistentvolumeclaims/default/data");
  EXPECT_EQ(EncodeSyncerKey(EventKey{kCluster, "acme-train", "e.1"}), "acme/train/events/acme-train/e.1");
  EXPECT_EQ(EncodeSyncerKey(TokenKey{kCluster, "default", "u-1"}), "acme/train/tokens/default/u-1");
  EXPECT_EQ(EncodeSyncerKey(NodesKey{kCluster}), "acme/train/nodes");
  EXPECT_EQ(EncodeSyncerKey(PodGroupsKey{kCluster}), "acme/train/podgroups");
}

TEST(SyncerKeys, MalformedTextIsRefused) {
  for (const char* text : {"", "/", "acme", "acme/", "/train", "acme//", "acme/train/", "acme/train/unknown",
                           "acme/train/nodes/x/y", "acme/train//web", "acme/train/default/", "/train/default/web",
                           "acme/train/deployments/default/web", "acme/train/events/ns/", "acme/train/tokens/ns/",
                           "acme/train/configmaps//cfg", "acme/train/a/b/c/d", "acme/train/secrets/default/s/extra"}) {
    EXPECT_EQ(DecodeSyncerKey(text), std::nullopt) << '"' << text << '"';
    EXPECT_EQ(reconcile::DecodeKey<SyncerKey>(text), std::nullopt) << '"' << text << '"';
  }
}

TEST(SyncerKeys, EveryKeyIsOfItsVirtualClusterAndOnItsShard) {
  for (const SyncerKey& key : EveryShape(kOdd)) {
    EXPECT_EQ(ClusterOf(key), kOdd) << EncodeSyncerKey(key);
    EXPECT_EQ(SyncerShardKey(key), "t-0/9v.x");
    // The provisioner's key of the virtual cluster, on every shard count.
    for (int shards : {1, 8, 31}) {
      EXPECT_EQ(reconcile::ShardOf(SyncerShardKey(key), shards),
                reconcile::ShardOf(reconcile::EncodeKey(kOdd), shards));
    }
  }
}

TEST(SyncerKeys, KeysOfOneTextButAnotherShapeAreOtherKeys) {
  std::set<SyncerKey> keys;
  for (const SyncerKey& key : EveryShape(kCluster)) EXPECT_TRUE(keys.insert(key).second) << EncodeSyncerKey(key);
  EXPECT_NE(SyncerKey(ObjectKey{kCluster, ObjectKind::kService, "default", "svc"}),
            SyncerKey(ObjectKey{kCluster, ObjectKind::kEndpoints, "default", "svc"}));
  EXPECT_NE(SyncerKey(NodesKey{kCluster}), SyncerKey(PodGroupsKey{kCluster}));
  EXPECT_NE(SyncerKey(ClusterKey{kCluster}), SyncerKey(NodesKey{kCluster}));
}

TEST(SyncerKeys, ObjectKindsAreTheirResources) {
  for (ObjectKind kind : {ObjectKind::kConfigMap, ObjectKind::kSecret, ObjectKind::kService, ObjectKind::kEndpoints,
                          ObjectKind::kClaim}) {
    EXPECT_EQ(ObjectKindOf(ResourceOf(kind)), kind);
  }
  EXPECT_EQ(ObjectKindOf(kube::kPods), std::nullopt);
  EXPECT_EQ(ObjectKeyOf(kCluster, kube::kPods, "default", "web"), std::nullopt);
  EXPECT_EQ(ObjectKeyOf(kCluster, kube::kSecrets, "default", "s"),
            (ObjectKey{kCluster, ObjectKind::kSecret, "default", "s"}));
  EXPECT_EQ(&ResourceOf(tenancy::sync::CopiedKind::kConfigMap), &kube::kConfigMaps);
  EXPECT_EQ(&ResourceOf(tenancy::sync::CopiedKind::kSecret), &kube::kSecrets);
}

}  // namespace
}  // namespace septa::syncer
