// core::VirtualObjectStore on PostgreSQL: the tables of
// migrations/0007_virtual_objects.sql on a small pool of its own. An object
// write is one transaction: the object's row and the control plane's resource
// version, so a reloaded control plane never hands out a version twice.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "services/core/virtual_object_store.h"

namespace septa::store {

struct PgVirtualObjectStoreOptions {
  std::string database_url{};
  int pool_size = 2;
  std::chrono::milliseconds acquire_timeout{5000};
  // statement_timeout and connect timeout, as PgStoreOptions::statement_timeout.
  std::chrono::milliseconds statement_timeout{5000};
};

class ConnectionPool;

class PgVirtualObjectStore final : public core::VirtualObjectStore {
 public:
  explicit PgVirtualObjectStore(PgVirtualObjectStoreOptions options);  // connects lazily
  ~PgVirtualObjectStore() override;

  Result<std::pair<core::StoredControlPlane, bool>> CreateControlPlane(
      const core::VirtualClusterKey& key, const core::StoredControlPlane& created) override;
  Result<std::optional<core::StoredControlPlane>> GetControlPlane(const core::VirtualClusterKey& key) override;
  Result<std::vector<core::VirtualClusterKey>> ListControlPlanes() override;
  Status RemoveControlPlane(const core::VirtualClusterKey& key) override;
  Result<std::vector<core::VirtualObject>> LoadObjects(const core::VirtualClusterKey& key) override;
  Result<std::optional<std::uint64_t>> ResourceVersion(const core::VirtualClusterKey& key) override;
  Status PutObject(const core::VirtualClusterKey& key, const core::VirtualObject& object,
                   std::uint64_t expected) override;
  Status DeleteObject(const core::VirtualClusterKey& key, const std::string& type_key, const std::string& ns,
                      const std::string& name, std::uint64_t resource_version, std::uint64_t expected) override;
  Status AddTokenDigest(const core::VirtualClusterKey& key, const std::string& sha256_hex) override;
  Result<std::vector<std::string>> TokenDigests(const core::VirtualClusterKey& key) override;
  Result<ListenerCertificate> ListenerCa(const ListenerCertificate& created) override;
  Status ReplaceCaPrivateKey(const core::VirtualClusterKey& key, const std::string& expected,
                             const std::string& replacement) override;
  Result<std::optional<ListenerCertificate>> StoredListenerCa() override;
  Status ReplaceListenerCaPrivateKey(const std::string& expected, const std::string& replacement) override;
  Result<std::int64_t> CredentialTtlMax(const core::VirtualClusterKey& key) override;
  Result<core::CredentialStatus> GetCredentialStatus(const core::VirtualClusterKey& key,
                                                     const std::string& serial) override;
  Result<bool> TenantSuspended(const std::string& tenant) override;

 private:
  std::unique_ptr<ConnectionPool> pool_;
};

}  // namespace septa::store
