// Where the simulated virtual control planes keep what must survive a septad
// restart: each virtual cluster's CA, admin token digests, resource-version
// counter and Kubernetes objects. Implemented on PostgreSQL by
// store::PgVirtualObjectStore (migrations/0007_virtual_objects.sql) and in
// memory by FakeVirtualObjectStore (tests/support).
//
// Writes are write-through: the control plane calls PutObject/DeleteObject
// under its storage lock before the write becomes visible, and answers the
// client only after they returned Ok, so an acknowledged write is durable.
//
// Several septad replicas may serve one virtual cluster, each from its own
// copy in memory. Every write is therefore a compare-and-set on the control
// plane's resource version: it succeeds only if the stored version is still
// the one the writer's copy was at (`expected`), else kAborted and nothing
// is written, so no write is ever based on a stale copy and resource
// versions never repeat (docs/ARCHITECTURE.md "Virtual control planes").
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/status.h"
#include "tenancy/virtual_cluster_ref.h"

namespace septa::core {

// The virtual cluster's name (tenancy/virtual_cluster_ref.h).
using VirtualClusterKey = tenancy::VirtualClusterRef;

// The virtual cluster "<tenant>/<vcluster>" names (a NOTIFY payload, an
// admin's argument); nullopt without a slash. Names never hold one
// (validation.h), so the first slash is the one. Lenient where
// tenancy::ParseVirtualClusterRef (a controller key's codec) is strict.
inline std::optional<VirtualClusterKey> ParseVirtualClusterKey(std::string_view text) {
  const std::size_t slash = text.find('/');
  if (slash == std::string_view::npos) return std::nullopt;
  return VirtualClusterKey{std::string(text.substr(0, slash)), std::string(text.substr(slash + 1))};
}

// One virtual cluster's control plane as stored.
struct StoredControlPlane {
  std::string ca_certificate;  // PEM
  // PEM, or as stored: wrapped under the key-encryption key by
  // vault::SealedVirtualObjectStore (clear only in rows from before it).
  std::string ca_private_key;
  // The highest resource version ever given out, deletes included: a
  // reloaded control plane continues after it.
  std::uint64_t resource_version = 0;
};

// A client certificate's record in vcluster_credentials (migrations/0011).
enum class CredentialStatus {
  kUnrecorded,  // no credential with that serial was issued for the virtual cluster
  kActive,
  kRevoked,
  kSuspended,  // recorded, not revoked, but its tenant is suspended (core::TenantState)
};

struct VirtualObject {
  std::string type_key;  // kubesim's ResourceType::key(): "pods", "deployments.apps"
  std::string ns;        // empty for cluster-scoped objects
  std::string name;
  std::uint64_t resource_version = 0;
  std::string body;  // the object's JSON text
  friend bool operator==(const VirtualObject&, const VirtualObject&) = default;
};

class VirtualObjectStore {
 public:
  virtual ~VirtualObjectStore() = default;

  // Stores `created` unless the control plane exists; returns the stored one
  // (true: it was created now).
  virtual Result<std::pair<StoredControlPlane, bool>> CreateControlPlane(const VirtualClusterKey& key,
                                                                         const StoredControlPlane& created) = 0;
  virtual Result<std::optional<StoredControlPlane>> GetControlPlane(const VirtualClusterKey& key) = 0;
  virtual Result<std::vector<VirtualClusterKey>> ListControlPlanes() = 0;
  // Deletes the control plane with every object and token; Ok when absent.
  virtual Status RemoveControlPlane(const VirtualClusterKey& key) = 0;

  // Every object of the control plane, in no particular order.
  virtual Result<std::vector<VirtualObject>> LoadObjects(const VirtualClusterKey& key) = 0;
  // The control plane's resource version as stored; nullopt without it.
  virtual Result<std::optional<std::uint64_t>> ResourceVersion(const VirtualClusterKey& key) = 0;
  // If the control plane's resource version is `expected`: creates or
  // replaces the object and sets the version to the object's, atomically.
  // kAborted when the version is another (someone else wrote since the
  // writer's copy was loaded), kNotFound without the control plane.
  virtual Status PutObject(const VirtualClusterKey& key, const VirtualObject& object, std::uint64_t expected) = 0;
  // If the version is `expected`: deletes the object (Ok when absent) and
  // sets the version to `resource_version`, atomically; errors as PutObject.
  virtual Status DeleteObject(const VirtualClusterKey& key, const std::string& type_key, const std::string& ns,
                              const std::string& name, std::uint64_t resource_version, std::uint64_t expected) = 0;

  // Admin bearer tokens, by SHA-256 digest (hex): the token itself is never stored.
  virtual Status AddTokenDigest(const VirtualClusterKey& key, const std::string& sha256_hex) = 0;
  virtual Result<std::vector<std::string>> TokenDigests(const VirtualClusterKey& key) = 0;

  // The CA of the one HTTPS listener all virtual control planes share: each
  // septad issues its serving certificate from it at start, so kubeconfigs
  // stay valid across restarts and replicas. The stored one, or `created`.
  struct ListenerCertificate {
    std::string ca_certificate, ca_private_key;
  };
  virtual Result<ListenerCertificate> ListenerCa(const ListenerCertificate& created) = 0;

  // Replaces a stored CA private key (re-wrapping it) if it is still
  // `expected`: kAborted when it is another, kNotFound without the row.
  virtual Status ReplaceCaPrivateKey(const VirtualClusterKey& key, const std::string& expected,
                                     const std::string& replacement) = 0;
  // The stored listener CA, nullopt before one was stored; and its key's
  // replacement, as ReplaceCaPrivateKey.
  virtual Result<std::optional<ListenerCertificate>> StoredListenerCa() = 0;
  virtual Status ReplaceListenerCaPrivateKey(const std::string& expected, const std::string& replacement) = 0;

  // Whether the client certificate `serial` (lower-case hex, as
  // vcluster_credentials records it) of `key` may still authenticate: read on
  // every request that presents one, so a revocation or its tenant's
  // suspension holds at once on every replica (docs/ARCHITECTURE.md "The
  // virtual control plane"). A revoked one is kRevoked, suspended or not.
  virtual Result<CredentialStatus> GetCredentialStatus(const VirtualClusterKey& key, const std::string& serial) = 0;

  // The longest a credential of `key` may live, in seconds: its tenant's
  // trust tier's credential_ttl_max_seconds. Read at every TokenRequest,
  // whose service-account tokens it caps (kube-apiserver's
  // --service-account-max-token-expiration), so a tier change holds at
  // once. kNotFound without the tenant.
  virtual Result<std::int64_t> CredentialTtlMax(const VirtualClusterKey& key) = 0;
  // Whether `tenant` is suspended (false when it does not exist): read on
  // every request with one of its service-account tokens, so that a
  // suspension holds at once on every replica, as a revocation does.
  virtual Result<bool> TenantSuspended(const std::string& tenant) = 0;
};

}  // namespace septa::core
