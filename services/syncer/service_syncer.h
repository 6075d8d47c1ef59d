// A virtual cluster's services on the host (tenancy/sync/host_services.h):
// each virtual Service copied to its host namespace with a selector that
// picks its pods' host pods, kept equal to it, deleted when it goes; the
// host's cluster IP given to the virtual service (created again with it,
// crash-safe through the host copy's septa.dev/service-recreate
// annotation) and the host's load balancer status copied up. A service
// that may not be synced (external IPs) gets a SyncRefused event and no
// host copy. Level-based: the syncer calls Reconcile for keys
// ObjectKey(..., kube::kServices, ...).
#pragma once

#include <chrono>
#include <functional>
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
  // `enqueue` is called with service keys from the host informer's thread.
  ServiceSyncer(kube::Client& host, std::function<void(const std::string& key)> enqueue);
  ~ServiceSyncer();  // Stop

  // Starts the host informer on services (selector septa.dev/synced=true),
  // its first list within `timeout`.
  Status Start(std::chrono::milliseconds timeout);
  void Stop();

  // One virtual service (starts the virtual cluster's service watch).
  reconcile::Outcome Reconcile(WatchedCluster& cluster, const std::string& ns, const std::string& name);

  // The keys of the virtual services whose copies are in `host_namespace`
  // (the host informer's cache) for this virtual cluster.
  std::vector<std::string> ServiceKeys(const std::string& host_namespace, const std::string& tenant,
                                       const std::string& vcluster) const;

 private:
  void OnHostService(const nlohmann::json& host_service);
  Status DeleteHostCopy(const nlohmann::json& host_copy);
  // The virtual service is gone: its host copy goes too, unless the copy
  // records a recreation that a crash interrupted, which is finished.
  reconcile::Outcome VirtualGone(WatchedCluster& cluster, const std::string& ns, const std::string& name,
                                 const nlohmann::json& host_copy);
  reconcile::Outcome GiveHostIp(WatchedCluster& cluster, kube::Informer& virtual_services,
                                const nlohmann::json& virtual_service, nlohmann::json host_copy,
                                const nlohmann::json& recreated);
  Status Refuse(WatchedCluster& cluster, const nlohmann::json& virtual_service, const tenancy::sync::Refusal& refusal);

  kube::Client& host_;
  const std::function<void(const std::string&)> enqueue_;
  std::unique_ptr<kube::Informer> host_services_;
};

}  // namespace septa::syncer
