// core::VirtualObjectStore in memory, for unit tests; passes the same
// contract as the PostgreSQL one (virtual_object_store_contract.h).
// `fail_writes` makes every object write fail, as a database that is down;
// `FailReads` makes the reads a load does fail with a given status;
// `HoldWrites` stalls virtual clusters' object writes, as a database that is
// slow for one tenant, until `ReleaseWrites`.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <set>
#include <tuple>

#include "services/core/virtual_object_store.h"

namespace septa::test {

class FakeVirtualObjectStore final : public core::VirtualObjectStore {
 public:
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
  Result<core::CredentialStatus> GetCredentialStatus(const core::VirtualClusterKey& key,
                                                     const std::string& serial) override;
  // What SetCredentialTtlMax set for the tenant; 0 (no cap) for the others:
  // the fake knows every tenant.
  Result<std::int64_t> CredentialTtlMax(const core::VirtualClusterKey& key) override;
  Result<bool> TenantSuspended(const std::string& tenant) override;

  // What the credentials API writes to vcluster_credentials: an issued
  // certificate's serial, then its revocation.
  void RecordCredential(const core::VirtualClusterKey& key, const std::string& serial);
  void RevokeCredential(const core::VirtualClusterKey& key, const std::string& serial);
  // The tenant's trust tier's credential_ttl_max_seconds, as a tier change writes it.
  void SetCredentialTtlMax(const std::string& tenant, std::int64_t seconds);
  // What an admin's change of the tenant's state writes to tenants.
  void SetTenantSuspended(const std::string& tenant, bool suspended);

  std::atomic<bool> fail_writes{false};
  // GetControlPlane, LoadObjects and TokenDigests return `failure` until Ok is given.
  void FailReads(Status failure);
  void HoldWrites(const core::VirtualClusterKey& key);  // adds to those held
  void ReleaseWrites();                                 // all
  // Whether `n` writes are held within `bound`.
  bool AwaitHeld(std::size_t n, std::chrono::milliseconds bound);

 private:
  Status Held(const core::VirtualClusterKey& key);  // waits while `key`'s writes are held
  Status read_failure() {
    std::lock_guard lock(hold_mu_);
    return read_failure_;
  }
  using ObjectKey = std::tuple<std::string, std::string, std::string>;  // type, namespace, name
  struct ControlPlane {
    core::StoredControlPlane stored;
    std::map<ObjectKey, core::VirtualObject> objects;
    std::set<std::string> tokens;
  };
  std::mutex mu_;
  std::map<core::VirtualClusterKey, ControlPlane> planes_;
  std::optional<ListenerCertificate> listener_;
  std::map<std::pair<core::VirtualClusterKey, std::string>, bool> credentials_;  // (key, serial) -> revoked
  std::map<std::string, std::int64_t> credential_ttl_max_;                       // by tenant
  std::set<std::string> suspended_tenants_;
  std::mutex hold_mu_;
  std::condition_variable hold_changed_;
  std::set<core::VirtualClusterKey> held_keys_;
  std::size_t held_ = 0;
  Status read_failure_ = Status::Ok();
};

}  // namespace septa::test
