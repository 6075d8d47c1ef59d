// The simulated virtual control planes: septad serves every virtual
// cluster's Kubernetes API itself, on one HTTPS listener, one path prefix per
// virtual cluster: https://<host>:<port>/vc/<tenant>/<vcluster> (kubectl
// takes a path in `server`). Each is an isolated kubesim object store
// (VirtualControlPlane) written through to PostgreSQL, loaded on its first
// request or at Ensure, and evicted from memory after `idle_after` without
// requests or watches.
//
// Credentials, checked after routing against the addressed virtual cluster's
// own (services/vcp/gate.h), so one virtual cluster's credential is refused
// (401) by every other: bearer tokens against its token digests; client
// certificates against its own CA (ECDSA P-256, stored with it; or the
// options' client_ca, the Vault issuer's intermediate of that cluster
// alone), the injected clock and the revocations in vcluster_credentials.
// The listener therefore asks every client for a certificate but accepts any
// at the handshake (optional: tokens work without one) and leaves the
// verification to the virtual cluster the path names. A caller without a
// credential of the cluster gets the same 401 whether it exists or not, and
// nothing is loaded for it.
//
// Bounds (hostile-tenant finding M7): each virtual cluster's API limits
// (tenancy/api_limits.h, asked of options.api_limits) bound its stored
// objects and bytes (403 `exceeded quota`), its open watches and requests
// in flight (429 with Retry-After); and the listener's I/O threads only
// route and authenticate: every request runs on a worker of a fair queue
// (fair_queue.h) with one flow per tenant, so one tenant's load (its
// PostgreSQL writes, its loads) never times out another's requests.
// The listener's serving certificate is issued at start from a listener CA
// stored in the database, so kubeconfigs survive restarts.
//
// Replicas: several septads on one database may serve the same virtual
// cluster (a load balancer in front). Each request first refreshes the
// loaded copy if the stored resource version moved (one indexed read), so a
// client reads its own writes through any replica; writes are
// compare-and-set on that version (VirtualControlPlane); and Changed(), fed
// by the NOTIFY every write sends (migrations/0010_virtual_objects_notify.sql),
// makes the next Tick refresh the copy, so its watchers see other replicas' writes.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "common/clock.h"
#include "services/core/control_plane.h"
#include "services/core/virtual_object_store.h"
#include "services/http/server.h"
#include "services/http/tls.h"
#include "services/vcp/fair_queue.h"
#include "services/vcp/gate.h"
#include "services/vcp/virtual_control_plane.h"
#include "tenancy/api_limits.h"

namespace septa::vcp {

struct SimulatedControlPlanesOptions {
  std::string host = "127.0.0.1";  // HTTPS
  std::uint16_t port = 0;          // 0 picks a free one
  // The address clients reach the listener at, in the endpoints and the
  // serving certificate; empty: `host`, loopback for a wildcard.
  std::string advertise_host{};
  std::size_t io_threads = 2;
  // Open connections at most (http::ServerOptions::max_connections); a
  // syncer holds 2-4 per watched virtual cluster.
  std::size_t max_connections = 1024;
  // Unsent bytes of one watch after which its client is disconnected (it
  // relists): what a tenant's watches can hold of septad's memory is at
  // most api_limits.watches times this (http::ServerOptions::max_stream_buffer,
  // 64 MiB for other listeners). A watch from resourceVersion 0 over more
  // objects than this is cut too: informers list, then watch from the
  // list's version.
  std::size_t max_stream_buffer = 8 * 1024 * 1024;
  // Watch bookmarks and workload controllers of the loaded control planes,
  // and eviction; 0: no thread, the owner calls Tick() (deterministic tests).
  std::chrono::milliseconds tick_interval{100};
  // A loaded control plane without requests or watches for this long is
  // dropped from memory (its objects stay stored); 0: never.
  std::chrono::milliseconds idle_after{10 * 60'000};
  // Injected for deterministic tests; the system ones when null.
  const Clock* clock = nullptr;
  RandomSource* random = nullptr;
  // The CA (PEM) a virtual cluster's client certificates must chain to when
  // another issuer than its own CA makes them (the Vault issuer: the
  // cluster's intermediate, vault::VaultPki::ClientCaPem), asked at every
  // load; a failure fails the load. Unset: the cluster's own stored CA.
  std::function<Result<std::string>(const core::VirtualClusterKey&)> client_ca{};
  // The API limits of a virtual cluster (core::EffectiveApiLimitsOf in
  // septad), asked when the listener takes it into use and after Changed();
  // kNotFound: no such virtual cluster (its requests are refused as
  // unauthenticated). Unset: no limits (tests, benchmarks).
  std::function<Result<tenancy::ApiLimits>(const core::VirtualClusterKey&)> api_limits{};
  // The workers requests run on and each tenant's share of them.
  FairQueueOptions fairness{};
};

// The CA of the listener, stored by the first septad on the database.
Result<core::VirtualObjectStore::ListenerCertificate> ListenerCa(core::VirtualObjectStore& store);

// Stores the control plane `key` with a new CA unless it is stored already.
Status StoreControlPlane(core::VirtualObjectStore& store, const core::VirtualClusterKey& key);

// Stores a new admin token's digest for `key` and returns a kubeconfig with
// the token, pointing at `endpoint` and trusting `listener_ca_certificate`.
// Returns the token digest in `digest` for a plane that is already loaded.
Result<std::string> IssueAdminKubeconfig(core::VirtualObjectStore& store, RandomSource& random,
                                         const core::VirtualClusterKey& key, const std::string& endpoint,
                                         const std::string& listener_ca_certificate, std::string& digest);

class SimulatedControlPlanes final : public core::ControlPlanes {
 public:
  SimulatedControlPlanes(core::VirtualObjectStore& store, SimulatedControlPlanesOptions options);
  ~SimulatedControlPlanes() override;

  // Issues the serving certificate and listens.
  Status Start();
  void Stop();
  // Refreshes the loaded control planes told of as changed, ticks every
  // loaded one, then evicts the idle ones.
  void Tick();
  // Another replica (or this one) wrote the virtual cluster: the next Tick
  // refreshes its copy, if loaded. ChangedAll: after notices may have been lost.
  void Changed(const std::string& tenant, const std::string& vcluster);
  void ChangedAll();
  // The virtual cluster's row changed (NOTIFY septa_vclusters): the next
  // Tick reads its API limits again, if it is in use.
  void LimitsChanged(const std::string& tenant, const std::string& vcluster);
  void LimitsChangedAll();

  Result<core::ControlPlaneState> Ensure(const std::string& tenant, const std::string& vcluster) override;
  Status Remove(const std::string& tenant, const std::string& vcluster) override;
  Result<std::vector<std::pair<std::string, std::string>>> List() override;
  // The syncer's: user septa-syncer in system:masters, a bearer token derived
  // from the stored listener CA key (HMAC-SHA256 of "septa-syncer/<tenant>/<vcluster>"),
  // accepted by this virtual cluster only; the same on every replica and
  // after restarts, nothing stored. After Start.
  Result<std::string> SyncerKubeconfig(const std::string& tenant, const std::string& vcluster) override;

  // A kubeconfig with a new admin bearer token (system:masters) of the
  // virtual cluster: for tests and operators, never for tenants.
  Result<std::string> AdminKubeconfig(const std::string& tenant, const std::string& vcluster);

  std::string endpoint(const std::string& tenant, const std::string& vcluster) const;
  // The host of the endpoints (SimulatedControlPlanesOptions::advertise_host).
  const std::string& endpoint_host() const { return endpoint_host_; }
  std::uint16_t port() const;
  const std::string& listener_ca_certificate() const { return listener_ca_.certificate; }
  std::size_t loaded_count() const;
  // A tenant's requests waiting for a worker (for tests and metrics).
  std::size_t waiting(const std::string& tenant) const;

 private:
  using Plane = std::shared_ptr<VirtualControlPlane>;
  using GatePtr = std::shared_ptr<Gate>;
  // A request routed to a virtual cluster, until it is served.
  struct Routed {
    core::VirtualClusterKey key;
    std::string api_path;  // the target without the /vc/<tenant>/<vcluster> prefix
    http::Request request;
    std::shared_ptr<http::Exchange> exchange;
  };
  std::string SyncerToken(const core::VirtualClusterKey& key) const;
  // The key its service account tokens are signed under (HMAC-SHA256 of
  // "septa-service-accounts/<tenant>/<vcluster>" under the listener CA key).
  std::string ServiceAccountKey(const core::VirtualClusterKey& key) const;
  // On an I/O thread: routes, authenticates and admits, or refuses.
  void Route(http::Request&& request, std::shared_ptr<http::Exchange> exchange);
  // Identifies the caller and counts the request against the cluster's
  // limits, then queues it in its tenant's flow. `on_worker`: called from a
  // worker that has just read the gate's credentials.
  void Admit(const GatePtr& gate, std::shared_ptr<Routed> routed, bool on_worker);
  // On a worker: the revocation read, the load, the refresh, the request.
  void Serve(const GatePtr& gate, const Caller& caller, const std::shared_ptr<Routed>& routed);
  // 503 with a fixed message and a request id; the detail goes to the log.
  void ReplyUnavailable(http::Exchange& exchange, const core::VirtualClusterKey& key, std::string_view what,
                        const Status& detail);
  // The gate of a virtual cluster in use, or nullptr.
  GatePtr FindGate(const core::VirtualClusterKey& key);
  // The gate, read from the store when not in use; kNotFound when not stored.
  Result<GatePtr> LoadedGate(const core::VirtualClusterKey& key);
  Result<tenancy::ApiLimits> LimitsOf(const core::VirtualClusterKey& key);
  // The loaded control plane, loading it when it is stored; NotFound when not.
  Result<Plane> Loaded(const core::VirtualClusterKey& key);

  core::VirtualObjectStore& store_;
  SimulatedControlPlanesOptions options_;
  SystemClock system_clock_;
  std::unique_ptr<RandomSource> system_random_;
  const Clock& clock_;
  RandomSource& random_;
  http::KeyPairPem listener_ca_;
  std::unique_ptr<http::Server> server_;
  std::string endpoint_host_;  // in endpoints: the advertised host, else the listen host, loopback for a wildcard

  mutable std::mutex mu_;  // planes_, gates_
  std::map<core::VirtualClusterKey, Plane> planes_;
  std::map<core::VirtualClusterKey, GatePtr> gates_;
  std::unique_ptr<FairQueue> queue_;
  std::atomic<std::uint64_t> request_ids_{0};
  std::string request_id_prefix_;  // random per process, so ids from two replicas differ
  std::mutex load_mu_;             // one load at a time: two requests never load one control plane twice

  std::mutex ticker_mu_;
  std::condition_variable ticker_wake_;
  bool stopping_ = false;
  std::thread ticker_;
};

}  // namespace septa::vcp
