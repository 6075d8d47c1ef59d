// The contract of core::VirtualObjectStore (services/core/virtual_object_store.h),
// run against FakeVirtualObjectStore and PgVirtualObjectStore.
//
// An implementation plugs in with an environment type:
//   struct Env {
//     Status SetUp();
//     core::VirtualObjectStore& store();
//     // What the credentials API writes to vcluster_credentials.
//     Status RecordCredential(const core::VirtualClusterKey&, const std::string& serial);
//     Status RevokeCredential(const core::VirtualClusterKey&, const std::string& serial);
//     // The tenant's trust tier's credential_ttl_max_seconds (the tenant made if need be).
//     Status SetCredentialTtlMax(const std::string& tenant, std::int64_t seconds);
//     // What an admin's change of the tenant's state writes to tenants.
//     Status SetTenantSuspended(const std::string& tenant, bool suspended);
//   };
#pragma once

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "services/core/virtual_object_store.h"

namespace septa::core::contract {

template <typename Env>
class VirtualObjectStoreContract : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(env_.SetUp().ok()); }
  VirtualObjectStore& store() { return env_.store(); }
  const VirtualClusterKey a_{"acme", "dev"};
  const VirtualClusterKey b_{"acme", "prod"};
  Env env_;
};
TYPED_TEST_SUITE_P(VirtualObjectStoreContract);

TYPED_TEST_P(VirtualObjectStoreContract, CreateKeepsTheFirstControlPlane) {
  auto first = this->store().CreateControlPlane(this->a_, {"cert-1", "key-1", 0});
  ASSERT_TRUE(first.ok()) << first.status().message();
  EXPECT_TRUE(first->second);
  auto again = this->store().CreateControlPlane(this->a_, {"cert-2", "key-2", 0});
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE(again->second);
  EXPECT_EQ(again->first.ca_certificate, "cert-1");
  EXPECT_EQ(again->first.ca_private_key, "key-1");
  auto got = this->store().GetControlPlane(this->a_);
  ASSERT_TRUE(got.ok());
  ASSERT_TRUE(got->has_value());
  EXPECT_EQ((*got)->ca_certificate, "cert-1");
  auto missing = this->store().GetControlPlane(this->b_);
  ASSERT_TRUE(missing.ok());
  EXPECT_FALSE(missing->has_value());
}

TYPED_TEST_P(VirtualObjectStoreContract, ObjectsAreStoredPerControlPlane) {
  ASSERT_TRUE(this->store().CreateControlPlane(this->a_, {"c", "k", 0}).ok());
  ASSERT_TRUE(this->store().CreateControlPlane(this->b_, {"c", "k", 0}).ok());
  VirtualObject pod{"pods", "default", "web", 7, R"({"kind":"Pod"})"};
  VirtualObject ns{"namespaces", "", "default", 8, R"({"kind":"Namespace"})"};
  ASSERT_TRUE(this->store().PutObject(this->a_, pod, 0).ok());
  ASSERT_TRUE(this->store().PutObject(this->a_, ns, 7).ok());
  VirtualObject other{"pods", "default", "web", 2, R"({"kind":"Pod","spec":{}})"};
  ASSERT_TRUE(this->store().PutObject(this->b_, other, 0).ok());

  auto loaded = this->store().LoadObjects(this->a_);
  ASSERT_TRUE(loaded.ok());
  EXPECT_THAT(*loaded, ::testing::UnorderedElementsAre(pod, ns));
  auto plane = this->store().GetControlPlane(this->a_);
  ASSERT_TRUE(plane.ok());
  EXPECT_EQ((*plane)->resource_version, 8u);

  // Replacing: the new body and version.
  VirtualObject updated{"pods", "default", "web", 9, R"({"kind":"Pod","status":{}})"};
  ASSERT_TRUE(this->store().PutObject(this->a_, updated, 8).ok());
  loaded = this->store().LoadObjects(this->a_);
  ASSERT_TRUE(loaded.ok());
  EXPECT_THAT(*loaded, ::testing::UnorderedElementsAre(updated, ns));
  loaded = this->store().LoadObjects(this->b_);
  ASSERT_TRUE(loaded.ok());
  EXPECT_THAT(*loaded, ::testing::ElementsAre(other));
}

TYPED_TEST_P(VirtualObjectStoreContract, DeleteSetsTheResourceVersion) {
  ASSERT_TRUE(this->store().CreateControlPlane(this->a_, {"c", "k", 0}).ok());
  ASSERT_TRUE(this->store().PutObject(this->a_, {"pods", "default", "web", 4, "{}"}, 0).ok());
  ASSERT_TRUE(this->store().DeleteObject(this->a_, "pods", "default", "web", 5, 4).ok());
  ASSERT_TRUE(this->store().DeleteObject(this->a_, "pods", "default", "absent", 6, 5).ok());
  auto loaded = this->store().LoadObjects(this->a_);
  ASSERT_TRUE(loaded.ok());
  EXPECT_TRUE(loaded->empty());
  auto plane = this->store().GetControlPlane(this->a_);
  ASSERT_TRUE(plane.ok());
  EXPECT_EQ((*plane)->resource_version, 6u);
  auto version = this->store().ResourceVersion(this->a_);
  ASSERT_TRUE(version.ok());
  EXPECT_EQ(*version, std::optional<std::uint64_t>(6));
  version = this->store().ResourceVersion(this->b_);
  ASSERT_TRUE(version.ok());
  EXPECT_FALSE(version->has_value());
}

// Two replicas' copies at one version: the first write wins, the second
// (based on what the first replaced) is refused and changes nothing.
TYPED_TEST_P(VirtualObjectStoreContract, OnlyTheFirstWriteFromAVersionWins) {
  ASSERT_TRUE(this->store().CreateControlPlane(this->a_, {"c", "k", 0}).ok());
  VirtualObject first{"configmaps", "default", "cfg", 3, R"({"data":{"by":"first"}})"};
  ASSERT_TRUE(this->store().PutObject(this->a_, {"configmaps", "default", "cfg", 2, "{}"}, 0).ok());
  ASSERT_TRUE(this->store().PutObject(this->a_, first, 2).ok());
  EXPECT_EQ(
      this->store().PutObject(this->a_, {"configmaps", "default", "cfg", 3, R"({"data":{"by":"second"}})"}, 2).code(),
      Code::kAborted);
  EXPECT_EQ(this->store().PutObject(this->a_, {"configmaps", "default", "other", 3, "{}"}, 2).code(), Code::kAborted);
  EXPECT_EQ(this->store().DeleteObject(this->a_, "configmaps", "default", "cfg", 3, 2).code(), Code::kAborted);
  auto loaded = this->store().LoadObjects(this->a_);
  ASSERT_TRUE(loaded.ok());
  EXPECT_THAT(*loaded, ::testing::ElementsAre(first));
  EXPECT_EQ(*this->store().ResourceVersion(this->a_), std::optional<std::uint64_t>(3));
  // From the version it is at, the next write goes through.
  ASSERT_TRUE(this->store().DeleteObject(this->a_, "configmaps", "default", "cfg", 4, 3).ok());
  EXPECT_EQ(*this->store().ResourceVersion(this->a_), std::optional<std::uint64_t>(4));
}

TYPED_TEST_P(VirtualObjectStoreContract, WritesWithoutAControlPlaneAreNotFound) {
  EXPECT_EQ(this->store().PutObject(this->a_, {"pods", "default", "web", 1, "{}"}, 0).code(), Code::kNotFound);
  EXPECT_EQ(this->store().DeleteObject(this->a_, "pods", "default", "web", 1, 0).code(), Code::kNotFound);
  EXPECT_EQ(this->store().AddTokenDigest(this->a_, std::string(64, 'a')).code(), Code::kNotFound);
}

TYPED_TEST_P(VirtualObjectStoreContract, RemoveDeletesEverythingAndIsIdempotent) {
  ASSERT_TRUE(this->store().CreateControlPlane(this->a_, {"c", "k", 0}).ok());
  ASSERT_TRUE(this->store().CreateControlPlane(this->b_, {"c", "k", 0}).ok());
  ASSERT_TRUE(this->store().PutObject(this->a_, {"pods", "default", "web", 4, "{}"}, 0).ok());
  ASSERT_TRUE(this->store().AddTokenDigest(this->a_, std::string(64, 'a')).ok());
  ASSERT_TRUE(this->store().PutObject(this->b_, {"pods", "default", "web", 4, "{}"}, 0).ok());
  ASSERT_TRUE(this->store().RemoveControlPlane(this->a_).ok());
  ASSERT_TRUE(this->store().RemoveControlPlane(this->a_).ok());
  auto listed = this->store().ListControlPlanes();
  ASSERT_TRUE(listed.ok());
  EXPECT_THAT(*listed, ::testing::ElementsAre(this->b_));
  auto loaded = this->store().LoadObjects(this->a_);
  ASSERT_TRUE(loaded.ok());
  EXPECT_TRUE(loaded->empty());
  auto tokens = this->store().TokenDigests(this->a_);
  ASSERT_TRUE(tokens.ok());
  EXPECT_TRUE(tokens->empty());
  // Created again: starts empty.
  ASSERT_TRUE(this->store().CreateControlPlane(this->a_, {"c2", "k2", 0}).ok());
  loaded = this->store().LoadObjects(this->a_);
  ASSERT_TRUE(loaded.ok());
  EXPECT_TRUE(loaded->empty());
  EXPECT_EQ((*this->store().GetControlPlane(this->a_))->resource_version, 0u);
}

TYPED_TEST_P(VirtualObjectStoreContract, TokenDigestsArePerControlPlane) {
  ASSERT_TRUE(this->store().CreateControlPlane(this->a_, {"c", "k", 0}).ok());
  ASSERT_TRUE(this->store().CreateControlPlane(this->b_, {"c", "k", 0}).ok());
  const std::string one(64, 'a'), two(64, 'b');
  ASSERT_TRUE(this->store().AddTokenDigest(this->a_, one).ok());
  ASSERT_TRUE(this->store().AddTokenDigest(this->a_, one).ok());
  ASSERT_TRUE(this->store().AddTokenDigest(this->a_, two).ok());
  auto a = this->store().TokenDigests(this->a_);
  ASSERT_TRUE(a.ok());
  EXPECT_THAT(*a, ::testing::ElementsAre(one, two));
  auto b = this->store().TokenDigests(this->b_);
  ASSERT_TRUE(b.ok());
  EXPECT_TRUE(b->empty());
}

TYPED_TEST_P(VirtualObjectStoreContract, ListenerCaIsCreatedOnce) {
  auto first = this->store().ListenerCa({"cert-1", "key-1"});
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(first->ca_certificate, "cert-1");
  auto second = this->store().ListenerCa({"cert-2", "key-2"});
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(second->ca_certificate, "cert-1");
  EXPECT_EQ(second->ca_private_key, "key-1");
}

TYPED_TEST_P(VirtualObjectStoreContract, CaKeysAreReplacedOnlyFromTheExpectedValue) {
  const VirtualClusterKey key{"acme", "train"};
  EXPECT_EQ(this->store().ReplaceCaPrivateKey(key, "key", "wrapped").code(), Code::kNotFound);
  ASSERT_TRUE(this->store().CreateControlPlane(key, {"cert", "key", 0}).ok());
  EXPECT_EQ(this->store().ReplaceCaPrivateKey(key, "stale", "wrapped").code(), Code::kAborted);
  ASSERT_TRUE(this->store().ReplaceCaPrivateKey(key, "key", "wrapped").ok());
  EXPECT_EQ((*this->store().GetControlPlane(key))->ca_private_key, "wrapped");
  EXPECT_EQ((*this->store().GetControlPlane(key))->ca_certificate, "cert");

  EXPECT_FALSE(this->store().StoredListenerCa()->has_value());
  EXPECT_EQ(this->store().ReplaceListenerCaPrivateKey("key-1", "wrapped").code(), Code::kNotFound);
  ASSERT_TRUE(this->store().ListenerCa({"cert-1", "key-1"}).ok());
  EXPECT_EQ(this->store().ReplaceListenerCaPrivateKey("stale", "wrapped").code(), Code::kAborted);
  ASSERT_TRUE(this->store().ReplaceListenerCaPrivateKey("key-1", "wrapped").ok());
  EXPECT_EQ((*this->store().StoredListenerCa())->ca_private_key, "wrapped");
  EXPECT_EQ(this->store().ListenerCa({"cert-2", "key-2"})->ca_private_key, "wrapped");
}

TYPED_TEST_P(VirtualObjectStoreContract, CredentialStatusIsPerVirtualClusterAndSerial) {
  const std::string serial = "4a1b2c3d4e5f60718293a4b5c6d7e8f9";
  const std::string other = "5a1b2c3d4e5f60718293a4b5c6d7e8f9";
  EXPECT_EQ(*this->store().GetCredentialStatus(this->a_, serial), CredentialStatus::kUnrecorded);
  ASSERT_TRUE(this->env_.RecordCredential(this->a_, serial).ok());
  ASSERT_TRUE(this->env_.RecordCredential(this->a_, other).ok());
  EXPECT_EQ(*this->store().GetCredentialStatus(this->a_, serial), CredentialStatus::kActive);
  EXPECT_EQ(*this->store().GetCredentialStatus(this->b_, serial), CredentialStatus::kUnrecorded);
  ASSERT_TRUE(this->env_.RevokeCredential(this->a_, serial).ok());
  EXPECT_EQ(*this->store().GetCredentialStatus(this->a_, serial), CredentialStatus::kRevoked);
  EXPECT_EQ(*this->store().GetCredentialStatus(this->a_, other), CredentialStatus::kActive);
}

// The cap of the tokens a virtual cluster mints: its tenant's tier's, as
// the tier is now (read at each TokenRequest, so a change holds at once).
TYPED_TEST_P(VirtualObjectStoreContract, CredentialTtlMaxIsTheTenantsTierAsItIsNow) {
  ASSERT_TRUE(this->env_.SetCredentialTtlMax("acme", 3600).ok());
  EXPECT_EQ(*this->store().CredentialTtlMax(this->a_), 3600);
  EXPECT_EQ(*this->store().CredentialTtlMax(this->b_), 3600) << "every virtual cluster of the tenant";
  ASSERT_TRUE(this->env_.SetCredentialTtlMax("acme", 900).ok());
  EXPECT_EQ(*this->store().CredentialTtlMax(this->a_), 900);
}

// While its tenant is suspended, an active certificate is kSuspended and
// TenantSuspended says so; a revoked one stays kRevoked; resumed, as before.
TYPED_TEST_P(VirtualObjectStoreContract, ASuspendedTenantsCredentialsAreSuspended) {
  const std::string serial = "4a1b2c3d4e5f60718293a4b5c6d7e8f9";
  const std::string revoked = "5a1b2c3d4e5f60718293a4b5c6d7e8f9";
  ASSERT_TRUE(this->env_.RecordCredential(this->a_, serial).ok());
  ASSERT_TRUE(this->env_.RecordCredential(this->a_, revoked).ok());
  ASSERT_TRUE(this->env_.RevokeCredential(this->a_, revoked).ok());
  EXPECT_FALSE(*this->store().TenantSuspended("acme"));
  EXPECT_FALSE(*this->store().TenantSuspended("nobody"));
  ASSERT_TRUE(this->env_.SetTenantSuspended("acme", true).ok());
  EXPECT_TRUE(*this->store().TenantSuspended("acme"));
  EXPECT_EQ(*this->store().GetCredentialStatus(this->a_, serial), CredentialStatus::kSuspended);
  EXPECT_EQ(*this->store().GetCredentialStatus(this->a_, revoked), CredentialStatus::kRevoked);
  EXPECT_EQ(*this->store().GetCredentialStatus(this->b_, serial), CredentialStatus::kUnrecorded);
  ASSERT_TRUE(this->env_.SetTenantSuspended("acme", false).ok());
  EXPECT_FALSE(*this->store().TenantSuspended("acme"));
  EXPECT_EQ(*this->store().GetCredentialStatus(this->a_, serial), CredentialStatus::kActive);
}

REGISTER_TYPED_TEST_SUITE_P(VirtualObjectStoreContract, CreateKeepsTheFirstControlPlane,
                            ObjectsAreStoredPerControlPlane, DeleteSetsTheResourceVersion,
                            OnlyTheFirstWriteFromAVersionWins, WritesWithoutAControlPlaneAreNotFound,
                            RemoveDeletesEverythingAndIsIdempotent, TokenDigestsArePerControlPlane,
                            ListenerCaIsCreatedOnce, CaKeysAreReplacedOnlyFromTheExpectedValue,
                            CredentialStatusIsPerVirtualClusterAndSerial, CredentialTtlMaxIsTheTenantsTierAsItIsNow,
                            ASuspendedTenantsCredentialsAreSuspended);

}  // namespace septa::core::contract
