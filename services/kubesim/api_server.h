// The Kubernetes API surface of kubesim: discovery, authentication and
// authorization, and the verbs over Storage for every registered resource.
// An http::Handler; everything runs on the I/O thread (storage is in memory).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "common/clock.h"
#include "common/status.h"
#include "services/http/server.h"
#include "services/kubesim/auth.h"
#include "services/kubesim/resources.h"
#include "services/kubesim/storage.h"

namespace septa::kubesim {

struct ApiServerOptions {
  std::string server_version = "v1.30.0";
  // kube-apiserver's watch cache sends one about every minute
  // (defaultBookmarkFrequency). Every 5 s, as before, a syncer's thousands
  // of idle watches each woke twelve times as often as against a real one.
  std::chrono::milliseconds bookmark_interval{60'000};
  std::size_t default_page_size = 0;  // 0: lists are not paginated unless asked
  // An event is deleted this long after it was last written, as by
  // kube-apiserver's --event-ttl (default 1 h), so that events never pile
  // up (a virtual cluster's api_limits.objects counts them). Swept by Tick
  // at most once a minute.
  std::chrono::seconds event_ttl{3600};
  // Called with the message of every request RBAC refuses (403), on the I/O
  // thread, before the reply: what kube-apiserver's audit log records with
  // responseStatus 403. septa-kubesim prints each, so that a test can count
  // the denials a client met whether or not the client reports them.
  std::function<void(const std::string& message)> on_forbidden;
};

// Everything an API server instance owns, also used by the node simulator.
struct Cluster {
  Cluster(const Clock& clock, RandomSource& random, std::size_t history_limit)
      : clock(clock), random(random), storage(history_limit), authenticator(clock) {}
  const Clock& clock;
  RandomSource& random;
  ResourceRegistry registry;
  Storage storage;
  Authenticator authenticator;
  // Signs and verifies service account tokens (service_account_tokens.h);
  // empty: TokenRequest is unavailable (503). Set before requests are served.
  std::string service_account_key;
  // kube-apiserver's --service-account-max-token-expiration, asked at each
  // TokenRequest: a longer lifetime is shortened to it, with a warning, not
  // refused. Unset or 0: no cap; an error answers 503. Set before requests
  // are served.
  std::function<Result<std::int64_t>()> max_token_expiration_seconds;
};

class ApiServer {
 public:
  ApiServer(Cluster& cluster, ApiServerOptions options);

  void Handle(http::Request&& request, std::shared_ptr<http::Exchange> exchange);

  // Registers the kinds of the CustomResourceDefinitions in storage, after
  // Storage::Restore loaded them.
  void RestoreCustomResourceTypes();

  // Bookmarks, watch timeouts and expired events; called periodically by the owner.
  void Tick();

  // Writes on behalf of the system (seeding, node simulator): no auth. An
  // empty `field_manager` leaves the object without managed fields, so that
  // whoever applies it later owns it without conflicts.
  ApiResult<ObjectPtr> CreateObject(const std::string& group, const std::string& resource, nlohmann::json object,
                                    const std::string& field_manager = "kubesim");
  // Deletes on behalf of the system (workload controllers), with background
  // propagation to dependents.
  ApiResult<ObjectPtr> DeleteObject(const std::string& group, const std::string& resource, const std::string& ns,
                                    const std::string& name);

 private:
  struct Impl;
  std::shared_ptr<Impl> impl_;
};

// What every cluster holds from the start: the namespaces default,
// kube-system, kube-public and kube-node-lease (each with its default
// service account) and the built-in ClusterRoles. Creates only what is
// missing; fails when a write does (e.g. a StorageJournal refused it).
Status SeedCluster(ApiServer& api);

// Replies with the API server's Status object for the error (and its
// Retry-After), as kube-apiserver does; for front ends that refuse a request
// before it reaches an ApiServer.
void ReplyError(http::Exchange& ex, const ApiError& error);

}  // namespace septa::kubesim
