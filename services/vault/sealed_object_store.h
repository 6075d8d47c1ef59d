// core::VirtualObjectStore with the CA private keys encrypted at rest: a
// decorator over the PostgreSQL store that wraps every CA key it writes
// under the KeyRing's current KEK (the row's tenant/vcluster as additional
// authenticated data, "listener" for the listener's CA) and unwraps every
// key it reads, so the control planes and the issuer see PEM in memory and
// the database never does. A key still in clear (a row written before
// encryption at rest) is read as is until RewrapStoredKeys wraps it.
#pragma once

#include "services/core/virtual_object_store.h"
#include "services/vault/key_encryption.h"

namespace septa::vault {

// The additional authenticated data of a virtual cluster's CA key.
std::string CaKeyAad(const core::VirtualClusterKey& key);

class SealedVirtualObjectStore final : public core::VirtualObjectStore {
 public:
  SealedVirtualObjectStore(core::VirtualObjectStore& inner, const KeyRing& keys, RandomSource& random)
      : inner_(inner), keys_(keys), random_(random) {}

  Result<std::pair<core::StoredControlPlane, bool>> CreateControlPlane(
      const core::VirtualClusterKey& key, const core::StoredControlPlane& created) override;
  Result<std::optional<core::StoredControlPlane>> GetControlPlane(const core::VirtualClusterKey& key) override;
  Result<std::vector<core::VirtualClusterKey>> ListControlPlanes() override { return inner_.ListControlPlanes(); }
  Status RemoveControlPlane(const core::VirtualClusterKey& key) override { return inner_.RemoveControlPlane(key); }
  Result<std::vector<core::VirtualObject>> LoadObjects(const core::VirtualClusterKey& key) override {
    return inner_.LoadObjects(key);
  }
  Result<std::optional<std::uint64_t>> ResourceVersion(const core::VirtualClusterKey& key) override {
    return inner_.ResourceVersion(key);
  }
  Status PutObject(const core::VirtualClusterKey& key, const core::VirtualObject& object,
                   std::uint64_t expected) override {
    return inner_.PutObject(key, object, expected);
  }
  Status DeleteObject(const core::VirtualClusterKey& key, const std::string& type_key, const std::string& ns,
                      const std::string& name, std::uint64_t resource_version, std::uint64_t expected) override {
    return inner_.DeleteObject(key, type_key, ns, name, resource_version, expected);
  }
  Status AddTokenDigest(const core::VirtualClusterKey& key, const std::string& sha256_hex) override {
    return inner_.AddTokenDigest(key, sha256_hex);
  }
  Result<std::vector<std::string>> TokenDigests(const core::VirtualClusterKey& key) override {
    return inner_.TokenDigests(key);
  }
  Result<ListenerCertificate> ListenerCa(const ListenerCertificate& created) override;
  // The replacements are passed through as given (already wrapped).
  Status ReplaceCaPrivateKey(const core::VirtualClusterKey& key, const std::string& expected,
                             const std::string& replacement) override {
    return inner_.ReplaceCaPrivateKey(key, expected, replacement);
  }
  Result<std::optional<ListenerCertificate>> StoredListenerCa() override;
  Status ReplaceListenerCaPrivateKey(const std::string& expected, const std::string& replacement) override {
    return inner_.ReplaceListenerCaPrivateKey(expected, replacement);
  }
  Result<core::CredentialStatus> GetCredentialStatus(const core::VirtualClusterKey& key,
                                                     const std::string& serial) override {
    return inner_.GetCredentialStatus(key, serial);
  }
  Result<std::int64_t> CredentialTtlMax(const core::VirtualClusterKey& key) override {
    return inner_.CredentialTtlMax(key);
  }
  Result<bool> TenantSuspended(const std::string& tenant) override { return inner_.TenantSuspended(tenant); }

 private:
  Result<std::string> Open(const std::string& stored, const std::string& aad) const;

  core::VirtualObjectStore& inner_;
  const KeyRing& keys_;
  RandomSource& random_;
};

struct RewrapReport {
  int rewrapped = 0;  // clear or under the previous KEK before, under the current one now
  int current = 0;    // already under the current KEK
};

// Wraps under the current KEK every CA key of `raw` (the undecorated store;
// the listener's CA too) that is in clear or under the previous KEK: septad's start-time pass, so
// rows from before encryption at rest are encrypted and a new kek_file
// (with the old one as kek_previous_file) re-wraps them all. Each row is a
// compare-and-set on its old value, so replicas doing it at once agree; a
// septad without the new key keeps reading keys under the old one only as
// long as it has that one as its current or previous KEK.
Result<RewrapReport> RewrapStoredKeys(core::VirtualObjectStore& raw, const KeyRing& keys, RandomSource& random);

}  // namespace septa::vault
