// One loaded virtual control plane: a kubesim object store (no nodes) with
// the workload controllers, written through to a core::VirtualObjectStore,
// behind this virtual cluster's own credentials: a bearer token that is one
// of its service account tokens (signed under its key; kubesim checks the
// rest) or matches its admin token digests, or else a client certificate
// checked against its CA, the clock and the revocations recorded in the store.
// The tenant's credentials (certificates, service account tokens) are
// refused, 403, while the store says its tenant is suspended. Built from the stored rows on load;
// evicted from memory when idle by SimulatedControlPlanes, which owns the listener.
//
// Other septad replicas may load and write the same virtual cluster: every
// write-through is a compare-and-set on the stored resource version (a
// write based on a stale copy is refused, 409 Conflict, and the copy marked
// stale), and Refresh brings the copy up to what is stored, publishing the
// differences to this copy's watchers.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "services/core/virtual_object_store.h"
#include "services/http/tls.h"
#include "services/kubesim/api_server.h"
#include "services/kubesim/workload_controllers.h"

namespace septa::vcp {

// Every admin token authenticates as this user, in system:masters.
inline constexpr std::string_view kAdminUser = "septa-admin";
// The syncer's token (SimulatedControlPlanes::SyncerKubeconfig) authenticates
// as this user, in system:masters.
inline constexpr std::string_view kSyncerUser = "septa-syncer";

class VirtualControlPlane {
 public:
  // What SimulatedControlPlanes derives or asks for at every load; never stored.
  struct Secrets {
    // The SHA-256 of the token accepted as kSyncerUser; empty: none is.
    std::string syncer_token_digest;
    // The CA client certificates must chain to; empty: the stored one.
    std::string client_ca_pem;
    // Signs and verifies its service account tokens (TokenRequest); empty:
    // a fresh random key, so tokens die with this copy.
    std::string service_account_key;
  };
  // Rebuilds the control plane `key` from `store`, then creates what every
  // cluster holds and it lacks (kubesim::SeedCluster: namespaces, service
  // accounts, ClusterRoles), so a crash right after the control plane was
  // stored leaves nothing missing, as a real API server re-creates `default`.
  static Result<std::unique_ptr<VirtualControlPlane>> Load(const core::VirtualClusterKey& key,
                                                           core::VirtualObjectStore& store, const Clock& clock,
                                                           RandomSource& random, Secrets secrets);
  ~VirtualControlPlane();

  // A request whose target no longer carries the /vc/<tenant>/<vcluster> prefix.
  void Handle(http::Request&& request, std::shared_ptr<http::Exchange> exchange);
  // Watch bookmarks and timeouts, quotas, workload controllers.
  void Tick();

  // If another replica wrote since this copy last did (the stored resource
  // version moved), reloads the objects and converges the copy to them.
  // kNotFound when the control plane was removed.
  Status Refresh();
  // Told that another replica wrote (a NOTIFY), or found by a refused write.
  void MarkStale() { stale_ = true; }
  bool stale() const { return stale_; }

  void AllowTokenDigest(const std::string& sha256_hex);
  // Marks it used now: SimulatedControlPlanes calls it under the lock its
  // eviction takes, so a plane handed to a request is not evicted under it.
  void Touch() { last_request_ = clock_.Now().time_since_epoch().count(); }
  // No request since `since` and no watch open.
  bool IdleSince(TimePoint since) const;
  std::size_t object_count() const;

 private:
  class Journal;
  VirtualControlPlane(const core::VirtualClusterKey& key, core::VirtualObjectStore& store, const Clock& clock,
                      RandomSource& random, std::uint64_t stored_version);
  bool KnowsToken(const std::string& digest) const;
  // The answer to a tenant's credential while its tenant is suspended.
  kubesim::ApiError SuspendedError() const;
  // The identity of a client certificate the listener accepted unverified,
  // if this virtual cluster's CA signed it, it is valid now and its serial is
  // recorded and not revoked; kUnauthenticated if not, kPermissionDenied
  // while its tenant is suspended, kUnavailable when the store cannot say.
  Result<http::PeerIdentity> VerifyClientCertificate(const http::ConnectionInfo& connection);

  const core::VirtualClusterKey key_;
  core::VirtualObjectStore& store_;
  const Clock& clock_;
  std::optional<http::ClientCertificateVerifier> client_ca_;  // set by Load
  std::atomic<bool> stale_{false};
  std::mutex refresh_mu_;  // one Refresh at a time
  std::unique_ptr<Journal> journal_;
  kubesim::Cluster cluster_;
  std::unique_ptr<kubesim::ApiServer> api_;
  std::unique_ptr<kubesim::WorkloadControllers> workloads_;
  std::mutex tick_mu_;  // one Tick at a time
  mutable std::mutex tokens_mu_;
  std::set<std::string> token_digests_;
  std::string syncer_token_digest_;
  std::atomic<TimePoint::rep> last_request_;
  std::size_t own_watchers_ = 0;  // kubesim's internal ones (the quota and workload controllers')
};

}  // namespace septa::vcp
