// One loaded virtual control plane: a kubesim object store (no nodes) with
// the workload controllers, written through to a core::VirtualObjectStore.
// Who may call it is decided before (services/vcp/gate.h): Handle takes the
// caller the listener identified. Built from the stored rows on load;
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
#include <string>
#include <vector>

#include "services/core/virtual_object_store.h"
#include "services/kubesim/api_server.h"
#include "services/kubesim/workload_controllers.h"
#include "services/vcp/gate.h"
#include "tenancy/api_limits.h"

namespace septa::vcp {

class VirtualControlPlane {
 public:
  // Rebuilds the control plane `key` from `store`, then creates what every
  // cluster holds and it lacks (kubesim::SeedCluster: namespaces, service
  // accounts, ClusterRoles), so a crash right after the control plane was
  // stored leaves nothing missing, as a real API server re-creates `default`.
  // `service_account_key` signs its service-account tokens (TokenRequest);
  // empty: a fresh random key, so tokens die with this copy.
  static Result<std::unique_ptr<VirtualControlPlane>> Load(const core::VirtualClusterKey& key,
                                                           core::VirtualObjectStore& store, const Clock& clock,
                                                           RandomSource& random, std::string service_account_key);
  ~VirtualControlPlane();

  // A request whose target no longer carries the /vc/<tenant>/<vcluster>
  // prefix, from `caller` (kServiceAccount, kAdmin, kSyncer, or a
  // kCertificate whose revocation was read).
  void Handle(http::Request&& request, std::shared_ptr<http::Exchange> exchange, const Caller& caller);
  // What its storage may hold (objects, object_bytes), from the next write.
  void SetLimits(const tenancy::ApiLimits& limits);
  // Watch bookmarks and timeouts, quotas, workload controllers.
  void Tick();

  // If another replica wrote since this copy last did (the stored resource
  // version moved), reloads the objects and converges the copy to them.
  // kNotFound when the control plane was removed.
  Status Refresh();
  // Told that another replica wrote (a NOTIFY), or found by a refused write.
  void MarkStale() { stale_ = true; }
  bool stale() const { return stale_; }

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

  const core::VirtualClusterKey key_;
  core::VirtualObjectStore& store_;
  const Clock& clock_;
  std::atomic<bool> stale_{false};
  std::mutex refresh_mu_;  // one Refresh at a time
  std::unique_ptr<Journal> journal_;
  kubesim::Cluster cluster_;
  std::unique_ptr<kubesim::ApiServer> api_;
  std::unique_ptr<kubesim::WorkloadControllers> workloads_;
  std::mutex tick_mu_;  // one Tick at a time
  std::atomic<TimePoint::rep> last_request_;
  std::mutex limits_mu_;
  std::optional<tenancy::ApiLimits> limits_;  // as last given to the storage
  std::size_t own_watchers_ = 0;              // kubesim's internal ones (the quota and workload controllers')
};

}  // namespace septa::vcp
