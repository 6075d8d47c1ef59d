// A virtual cluster's services on the host (tenancy/sync/host_services.h):
// each virtual Service copied to its host namespace with a selector that
// picks its pods' host pods, kept equal to it, deleted when it goes; the
// host's cluster IP given to the virtual service (two updates through
// ExternalName, crash-safe through the host copy's
// septa.dev/service-recreate annotation; never a delete) and the host's
// load balancer status copied up. A service
// without a selector has the tenant's Endpoints of its name copied too
// (tenancy/sync/host_endpoints.h), each address checked to be one of the
// virtual cluster's host pods; the virtual cluster's endpoints are watched
// from its first such service. A service or endpoints that may not be
// synced (external IPs, another's address) gets a SyncRefused event and no
// host copy. Level-based: the syncer calls Reconcile for keys
// ObjectKey{..., ObjectKind::kService or kEndpoints, ...} (syncer_keys.h), one reconcile
// for a service and its endpoints.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/status.h"
#include "services/kube/client.h"
#include "services/kube/watch.h"
#include "services/reconcile/controller.h"
#include "services/syncer/virtual_cluster_watches.h"

namespace septa::syncer {

class ServiceSyncer {
 public:
  // The pod IPs of a virtual cluster's host pods, as the host reports them,
  // with the pods' names.
  using HostPodIps = std::function<std::map<std::string, std::string>(const tenancy::sync::VirtualClusterView&)>;
  // `enqueue` is called with service keys from the host informers' threads.
  ServiceSyncer(kube::Client& host, EnqueueKey enqueue, HostPodIps host_pod_ips);
  ~ServiceSyncer();  // Stop

  // Starts the host informers on services and endpoints (selector
  // septa.dev/synced=true), their first lists within `timeout`.
  Status Start(std::chrono::milliseconds timeout);
  void Stop();

  // One virtual service and its endpoints (starts the virtual cluster's
  // service watch, and its endpoints watch for a service without a selector).
  reconcile::Outcome Reconcile(WatchedCluster& cluster, const std::string& ns, const std::string& name);

  // The keys of the virtual services whose copies (or their endpoints'
  // copies) are in `host_namespace` (the host informers' caches) for this
  // virtual cluster.
  std::vector<ObjectKey> ServiceKeys(const std::string& host_namespace, const VirtualClusterRef& cluster) const;

  // The keys of the virtual services whose endpoints' host copies lead to
  // host pod `host_pod` (the host informer's cache): looked at again when
  // it gives its IP back.
  std::vector<ObjectKey> KeysOfEndpointsNaming(const nlohmann::json& host_pod) const;

 private:
  void OnHostService(const nlohmann::json& host_service);
  // The host copy of the service's endpoints, as the virtual service and
  // endpoints dictate (none when it has a selector, or none are written).
  Status SyncEndpoints(WatchedCluster& cluster, const std::string& ns, const std::string& name,
                       const nlohmann::json* virtual_service);
  // The virtual service is gone (the tenant deleted it): its host copy goes too.
  reconcile::Outcome VirtualGone(WatchedCluster& cluster, const std::string& ns, const std::string& name,
                                 const nlohmann::json& host_copy);
  reconcile::Outcome GiveHostIp(WatchedCluster& cluster, kube::Informer& virtual_services,
                                const nlohmann::json& virtual_service, nlohmann::json host_copy,
                                const nlohmann::json& readdressed);
  // The second update, from the ExternalName marker to `readdressed`, and the record's end.
  reconcile::Outcome FinishReaddressing(WatchedCluster& cluster, const nlohmann::json& released,
                                        nlohmann::json host_copy, nlohmann::json readdressed);

  kube::Client& host_;
  const EnqueueKey enqueue_;
  const HostPodIps host_pod_ips_;
  std::unique_ptr<kube::Informer> host_services_;
  std::unique_ptr<kube::Informer> host_endpoints_;
};

}  // namespace septa::syncer
