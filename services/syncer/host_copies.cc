#include "services/syncer/host_copies.h"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "services/kube/resources.h"
#include "services/syncer/virtual_cluster_watches.h"
#include "tenancy/sync/bookkeeping.h"
#include "tenancy/sync/host_claims.h"
#include "tenancy/sync/host_endpoints.h"
#include "tenancy/sync/host_services.h"
#include "tenancy/sync/object_copies.h"

namespace septa::syncer {
namespace {

// The virtual resource of a kind the syncer copies; nullptr for another.
const kube::Resource* ResourceOfKind(std::string_view kind) {
  namespace tsync = tenancy::sync;
  if (kind == "Pod") return &kube::kPods;
  if (kind == tsync::KindName(tsync::CopiedKind::kConfigMap)) return &kube::kConfigMaps;
  if (kind == tsync::KindName(tsync::CopiedKind::kSecret)) return &kube::kSecrets;
  if (kind == tsync::kServiceKind) return &kube::kServices;
  if (kind == tsync::kEndpointsKind) return &kube::kEndpoints;
  if (kind == tsync::kClaimKind) return &kube::kPersistentVolumeClaims;
  return nullptr;
}

// Whether virtual pod `pod` has its host pod: `host_pods` has one that
// records it, or the syncer created it and the cache does not show it yet
// (WatchedCluster::placed_not_cached, read under the placement lock).
bool HasHostPod(WatchedCluster& cluster, const kube::Informer& host_pods, const nlohmann::json& pod) {
  namespace tsync = tenancy::sync;
  const std::string ns = tsync::MetadataField(pod, "namespace"), name = tsync::MetadataField(pod, "name");
  const std::string host_name = tsync::HostObjectName(name, ns, cluster.vcluster());
  if (cluster.placed_not_cached().contains(host_name)) return true;
  const std::optional<nlohmann::json> host_pod = host_pods.Get(cluster.synced().view.host_namespace, host_name);
  if (!host_pod) return false;
  const auto ref = tsync::VirtualRefOf(*host_pod, cluster.tenant(), cluster.vcluster());
  return ref && ref->ns == ns && ref->name == name;
}

}  // namespace

Status DeleteHostCopy(kube::Client& host, const kube::Resource& resource, const nlohmann::json& host_copy) {
  namespace tsync = tenancy::sync;
  kube::DeleteOptions options;
  options.precondition_uid = tsync::MetadataField(host_copy, "uid");
  const std::string ns = tsync::MetadataField(host_copy, "namespace"), name = tsync::MetadataField(host_copy, "name");
  Status deleted = host.Delete(resource, ns, name, options);
  if (!deleted.ok() && deleted.code() != Code::kNotFound) return deleted;
  spdlog::info("syncer: deleted the host copy {} {}/{}", resource.resource, ns, name);
  return Status::Ok();
}

std::optional<ObjectKey> KeyOfHostCopy(const nlohmann::json& host_copy, const kube::Resource& resource) {
  namespace tsync = tenancy::sync;
  VirtualClusterRef cluster{tsync::MetadataMapString(host_copy, "labels", tsync::kTenantLabel),
                            tsync::MetadataMapString(host_copy, "labels", tsync::kVclusterLabel)};
  auto ref = tsync::VirtualRefOf(host_copy, cluster.tenant, cluster.vcluster);
  if (!ref) return std::nullopt;
  return ObjectKeyOf(cluster, resource, ref->ns, ref->name);
}

void AddHostCopyKeys(std::set<ObjectKey>& keys, const kube::Informer& copies, const std::string& host_namespace,
                     const VirtualClusterRef& cluster, const kube::Resource& resource) {
  if (host_namespace.empty()) return;
  for (const nlohmann::json& copy : copies.ListNamespace(host_namespace)) {
    if (auto ref = tenancy::sync::VirtualRefOf(copy, cluster.tenant, cluster.vcluster)) {
      if (auto key = ObjectKeyOf(cluster, resource, ref->ns, ref->name)) keys.insert(*std::move(key));
    }
  }
}

Result<bool> HolderGone(WatchedCluster& cluster, const tenancy::sync::HostNameHolder& holder) {
  const kube::Resource* resource = ResourceOfKind(holder.kind);
  if (resource == nullptr) return false;
  if (resource == &kube::kPods) {
    if (cluster.pods().Get(holder.ref.ns, holder.ref.name)) return false;
  } else {
    auto objects = cluster.Objects(*resource);
    SEPTA_RETURN_IF_ERROR(objects);
    if ((*objects)->Get(holder.ref.ns, holder.ref.name)) return false;
  }
  auto live = cluster.client().Get(*resource, holder.ref.ns, holder.ref.name);
  if (live.ok()) return false;  // the cache is behind
  if (live.status().code() != Code::kNotFound) return live.status();
  return true;
}

void WakeWaiting(WatchedCluster& cluster, const kube::Resource& resource, const std::string& host_name,
                 const std::string& ns, const EnqueueKey& enqueue) {
  for (const SyncerKey& key : cluster.TakeWaiting(resource.resource, host_name, ns)) enqueue(key);
}

bool WaitFor(WatchedCluster& cluster, const kube::Informer& copies, const std::string& host_name,
             const kube::Resource& resource, const std::string& ns, const SyncerKey& key) {
  cluster.Wait(WatchedCluster::WaitingFor::kHolder, resource.resource, host_name, ns, key);
  return copies.Get(cluster.synced().view.host_namespace, host_name).has_value();
}

std::optional<tenancy::sync::Refusal> UsedByAnotherNamespace(WatchedCluster& cluster, const kube::Informer& host_pods,
                                                             std::string_view kind, const std::string& ns,
                                                             const std::string& name, const std::string& host_name) {
  namespace tsync = tenancy::sync;
  const std::vector<nlohmann::json> pods = cluster.pods().List();
  auto uses = [&](const nlohmann::json& pod) {
    return tsync::ReferenceWithHostName(pod, kind, host_name, cluster.vcluster());
  };
  // Whether a pod of `ns` that uses the host name has its host pod: `ns` holds it.
  std::optional<bool> held;
  for (const nlohmann::json& pod : pods) {
    const std::string pod_ns = tsync::MetadataField(pod, "namespace"), pod_name = tsync::MetadataField(pod, "name");
    if (pod_ns == ns || cluster.IsRefused(PodKey{cluster.ref(), pod_ns, pod_name})) continue;
    const std::string used = uses(pod);
    if (used.empty()) continue;
    // Before `ns` holds the host name, one not refused counts without a host
    // pod: its own key may create that any moment, seeing the host copies'
    // caches, which may not show yet a copy made here.
    if (!held) {
      const std::vector<nlohmann::json> own = cluster.pods().ListNamespace(ns);
      held = std::any_of(own.begin(), own.end(), [&](const nlohmann::json& own_pod) {
        return !uses(own_pod).empty() && HasHostPod(cluster, host_pods, own_pod);
      });
    }
    if (*held && !HasHostPod(cluster, host_pods, pod)) continue;
    return tsync::HostNameUsed(kind, ns, name, host_name, pod_ns, pod_name, used);
  }
  return std::nullopt;
}

}  // namespace septa::syncer
