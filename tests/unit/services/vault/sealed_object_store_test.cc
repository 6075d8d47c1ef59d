#include "services/vault/sealed_object_store.h"

#include <gtest/gtest.h>

#include "tests/support/fake_virtual_object_store.h"
#include "tests/support/seeded_random.h"
#include "tests/unit/services/vault/test_kek.h"

namespace septa::vault {
namespace {

const std::string kPem = "-----BEGIN PRIVATE KEY-----\nMIG...\n-----END PRIVATE KEY-----\n";
const core::VirtualClusterKey kTrain{"acme", "train"};
const core::VirtualClusterKey kOther{"acme", "other"};

using testing::Kek;

class SealedVirtualObjectStoreTest : public ::testing::Test {
 protected:
  std::string Raw(const core::VirtualClusterKey& key) { return (*raw_.GetControlPlane(key))->ca_private_key; }

  SeededRandom random_{9};
  KeyRing keys_{Kek('a'), std::nullopt};
  test::FakeVirtualObjectStore raw_;
  SealedVirtualObjectStore sealed_{raw_, keys_, random_};
};

TEST_F(SealedVirtualObjectStoreTest, StoresWrappedAndReadsPem) {
  auto created = sealed_.CreateControlPlane(kTrain, {"CERT", kPem, 0});
  ASSERT_TRUE(created.ok()) << created.status().message();
  EXPECT_EQ(created->first.ca_private_key, kPem);
  EXPECT_TRUE(keys_.IsCurrent(Raw(kTrain)));
  EXPECT_EQ(Raw(kTrain).find("PRIVATE KEY"), std::string::npos);
  EXPECT_EQ((*sealed_.GetControlPlane(kTrain))->ca_private_key, kPem);
  // A second create returns the stored CA, opened.
  auto again = sealed_.CreateControlPlane(kTrain, {"CERT2", "other key", 0});
  EXPECT_FALSE(again->second);
  EXPECT_EQ(again->first.ca_private_key, kPem);
}

TEST_F(SealedVirtualObjectStoreTest, AWrappedKeyMovedToAnotherRowIsRefused) {
  ASSERT_TRUE(sealed_.CreateControlPlane(kTrain, {"CERT", kPem, 0}).ok());
  ASSERT_TRUE(sealed_.CreateControlPlane(kOther, {"CERT", "other key", 0}).ok());
  ASSERT_TRUE(raw_.ReplaceCaPrivateKey(kOther, Raw(kOther), Raw(kTrain)).ok());
  auto moved = sealed_.GetControlPlane(kOther);
  ASSERT_FALSE(moved.ok());
  EXPECT_EQ(moved.status().code(), Code::kDataLoss);
}

TEST_F(SealedVirtualObjectStoreTest, TheListenerCaIsWrappedToo) {
  auto listener = sealed_.ListenerCa({"CERT", kPem});
  ASSERT_TRUE(listener.ok());
  EXPECT_EQ(listener->ca_private_key, kPem);
  EXPECT_TRUE(IsWrapped(raw_.ListenerCa({"X", "Y"})->ca_private_key));
  EXPECT_EQ(sealed_.ListenerCa({"X", "Y"})->ca_private_key, kPem);
}

TEST_F(SealedVirtualObjectStoreTest, TheStartPassWrapsKeysStoredInClear) {
  ASSERT_TRUE(raw_.CreateControlPlane(kTrain, {"CERT", kPem, 0}).ok());  // as before encryption at rest
  ASSERT_TRUE(raw_.ListenerCa({"CERT", "listener key"}).ok());
  EXPECT_EQ((*sealed_.GetControlPlane(kTrain))->ca_private_key, kPem) << "readable until wrapped";
  auto report = RewrapStoredKeys(raw_, keys_, random_);
  ASSERT_TRUE(report.ok()) << report.status().message();
  EXPECT_EQ(report->rewrapped, 2);
  EXPECT_TRUE(keys_.IsCurrent(Raw(kTrain)));
  EXPECT_TRUE(keys_.IsCurrent((*raw_.StoredListenerCa())->ca_private_key));
  EXPECT_EQ(sealed_.ListenerCa({"X", "Y"})->ca_private_key, "listener key");
  EXPECT_EQ((*sealed_.GetControlPlane(kTrain))->ca_private_key, kPem);
  auto second = RewrapStoredKeys(raw_, keys_, random_);
  EXPECT_EQ(second->rewrapped, 0);
  EXPECT_EQ(second->current, 2);
}

TEST_F(SealedVirtualObjectStoreTest, RotationRewrapsEveryKeyUnderTheNewKek) {
  ASSERT_TRUE(sealed_.CreateControlPlane(kTrain, {"CERT", kPem, 0}).ok());
  ASSERT_TRUE(sealed_.CreateControlPlane(kOther, {"CERT", "other key", 0}).ok());
  ASSERT_TRUE(sealed_.ListenerCa({"CERT", "listener key"}).ok());
  KeyRing rotated(Kek('b'), Kek('a'));
  SealedVirtualObjectStore during(raw_, rotated, random_);
  EXPECT_EQ((*during.GetControlPlane(kTrain))->ca_private_key, kPem) << "no downtime: old wrappings still open";
  auto report = RewrapStoredKeys(raw_, rotated, random_);
  ASSERT_TRUE(report.ok()) << report.status().message();
  EXPECT_EQ(report->rewrapped, 3);
  EXPECT_TRUE(rotated.IsCurrent((*raw_.StoredListenerCa())->ca_private_key));
  EXPECT_TRUE(rotated.IsCurrent(Raw(kTrain)));
  EXPECT_TRUE(rotated.IsCurrent(Raw(kOther)));
  KeyRing only_new(Kek('b'), std::nullopt);
  SealedVirtualObjectStore after(raw_, only_new, random_);
  EXPECT_EQ((*after.GetControlPlane(kTrain))->ca_private_key, kPem);
  EXPECT_EQ((*after.GetControlPlane(kOther))->ca_private_key, "other key");
  EXPECT_EQ((*after.StoredListenerCa())->ca_private_key, "listener key");
}

TEST_F(SealedVirtualObjectStoreTest, AKeyUnderAnUnknownKekStopsThePass) {
  ASSERT_TRUE(sealed_.CreateControlPlane(kTrain, {"CERT", kPem, 0}).ok());
  KeyRing stranger(Kek('c'), Kek('d'));
  auto report = RewrapStoredKeys(raw_, stranger, random_);
  ASSERT_FALSE(report.ok());
  EXPECT_EQ(report.status().code(), Code::kFailedPrecondition);
}

}  // namespace
}  // namespace septa::vault
