// What the virtual clusters' listener keeps of one virtual cluster in use,
// loaded or not: its credentials (the client CA, the admin token digests,
// the syncer's token digest, the key its service-account tokens are signed
// under) and its API limits (tenancy/api_limits.h) with the counts they
// bound. Who a request is, is decided here without I/O and without the
// cluster's objects, on the listener's I/O thread: a caller that cannot
// authenticate is refused before anything is loaded or queued, whether the
// cluster exists or not, and another tenant's caller never takes a place in
// this tenant's share of the listener (services/vcp/fair_queue.h).
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>

#include "common/clock.h"
#include "services/core/virtual_object_store.h"
#include "services/http/server.h"
#include "services/http/tls.h"
#include "tenancy/api_limits.h"

namespace septa::vcp {

// Every admin token authenticates as this user, in system:masters.
inline constexpr std::string_view kAdminUser = "septa-admin";
// The syncer's token (SimulatedControlPlanes::SyncerKubeconfig) authenticates
// as this user, in system:masters.
inline constexpr std::string_view kSyncerUser = "septa-syncer";

enum class CallerKind {
  kNone,            // no credential of this cluster's (or none at all)
  kUnknownToken,    // a bearer token not (yet) known: an admin token issued through another replica?
  kServiceAccount,  // a token signed under the cluster's key: kubesim checks expiry and what it is bound to
  kAdmin,           // an admin token (system:masters): tests and operators, never tenants
  kSyncer,          // septad's syncer (system:masters)
  kCertificate,     // a client certificate of the cluster's CA, valid now; its revocation is read later
};

struct Caller {
  CallerKind kind = CallerKind::kNone;
  std::string token;                       // the bearer token
  std::optional<http::PeerIdentity> peer;  // kCertificate
  // Counted against the API limits: the platform's own callers are not.
  bool counted() const { return kind != CallerKind::kAdmin && kind != CallerKind::kSyncer; }
};

class Gate {
 public:
  // What SimulatedControlPlanes derives or asks for; never stored.
  struct Secrets {
    // The SHA-256 of the token accepted as kSyncerUser; empty: none is.
    std::string syncer_token_digest;
    // The CA client certificates must chain to; empty: the stored one.
    std::string client_ca_pem;
    // Verifies its service-account tokens; empty: none is accepted here
    // (the control plane then signs with a key of its own).
    std::string service_account_key;
  };
  // The stored control plane's CA and admin token digests; kNotFound when
  // it is not stored.
  static Result<std::shared_ptr<Gate>> Load(const core::VirtualClusterKey& key, core::VirtualObjectStore& store,
                                            Secrets secrets, tenancy::ApiLimits limits, TimePoint now);

  const core::VirtualClusterKey& key() const { return key_; }

  // Which of this cluster's credentials the request presents (a bearer
  // token, when sent, decides alone); CPU only.
  Caller Identify(const http::Request& request, const http::ConnectionInfo& connection, TimePoint now) const;
  // Reads the admin token digests again, at most once a second (the rest:
  // false, so a flood of unknown tokens costs no reads); true when read.
  Result<bool> RereadTokens(core::VirtualObjectStore& store);
  void AllowTokenDigest(const std::string& sha256_hex);

  tenancy::ApiLimits limits() const;
  void SetLimits(const tenancy::ApiLimits& limits);
  // Told that the virtual cluster changed: its limits are read again at the next tick.
  void MarkLimitsStale() { limits_stale_ = true; }
  bool TakeLimitsStale() { return limits_stale_.exchange(false); }

  // One more request in flight, or one more watch, unless at the limit.
  bool TryAdmitRequest();
  void ReleaseRequest();
  bool TryOpenWatch();
  void CloseWatch();
  std::int64_t requests_in_flight() const { return in_flight_; }
  std::int64_t watches() const { return watches_; }

  void Touch(TimePoint now) { last_used_ = now.time_since_epoch().count(); }
  // Unused since `since`, nothing in flight and no watch open.
  bool IdleSince(TimePoint since) const;

 private:
  Gate(core::VirtualClusterKey key, http::ClientCertificateVerifier client_ca, Secrets secrets,
       tenancy::ApiLimits limits, TimePoint now);
  bool KnowsToken(const std::string& digest) const;
  static bool TryTake(std::atomic<std::int64_t>& count, const std::optional<std::int64_t>& limit);

  const core::VirtualClusterKey key_;
  const http::ClientCertificateVerifier client_ca_;
  const Secrets secrets_;
  mutable std::mutex mu_;  // guards the two below
  std::set<std::string> token_digests_;
  tenancy::ApiLimits limits_;
  std::chrono::steady_clock::time_point last_reread_{};
  std::atomic<bool> limits_stale_{false};
  std::atomic<std::int64_t> in_flight_{0};
  std::atomic<std::int64_t> watches_{0};
  std::atomic<TimePoint::rep> last_used_;
};

}  // namespace septa::vcp
