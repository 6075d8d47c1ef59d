// The events of synced pods, copied up to their virtual pods
// (tenancy/sync/virtual_events.h): what the host's scheduler and kubelets
// say about a pod (Scheduled, Pulled, BackOff, FailedScheduling...) shows in
// `kubectl describe pod` inside the virtual cluster.
//
// One host informer on the events about pods (field selector
// involvedObject.kind=Pod, every namespace: an event carries no label to
// select on). An event maps to its virtual cluster through the host pod it
// is about (the host pod cache's labels); one that arrives before its pod
// is cached is picked up by the virtual cluster's resync (EventKeys).
// Level-based: each pass reads the virtual copy live (no informer on the
// virtual clusters' events, which are many and of no other use) and creates
// or updates it. A copy stays when its host event goes: the virtual API
// server's event TTL removes it, as it removes every event.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/status.h"
#include "services/kube/client.h"
#include "services/kube/watch.h"
#include "services/reconcile/controller.h"
#include "services/syncer/virtual_cluster_watches.h"

namespace septa::syncer {

class EventCopier {
 public:
  // `enqueue` is called with event keys from the host informer's thread.
  EventCopier(kube::Client& host, EnqueueKey enqueue);
  ~EventCopier();  // Stop

  // Starts the host informer on events about pods (its first list within
  // `timeout`); `host_pods` is the syncer's informer on synced host pods.
  Status Start(kube::Informer& host_pods, std::chrono::milliseconds timeout);
  void Stop();

  // One host event of `cluster`'s host namespace: its virtual copy created,
  // or updated when it differs (a repeated event's count and times). A
  // virtual event of that name that the syncer did not write is left alone.
  reconcile::Outcome Reconcile(WatchedCluster& cluster, const std::string& host_namespace, const std::string& name);

  // The keys of the events in `host_namespace` about the virtual cluster's
  // host pods (the informers' caches).
  std::vector<EventKey> EventKeys(const std::string& host_namespace, const VirtualClusterRef& cluster) const;

 private:
  // The key of `event`; nullopt when it is not about a synced pod in the cache.
  std::optional<EventKey> KeyOf(const nlohmann::json& event) const;

  kube::Client& host_;
  const EnqueueKey enqueue_;
  kube::Informer* host_pods_ = nullptr;
  std::unique_ptr<kube::Informer> host_events_;
};

}  // namespace septa::syncer
