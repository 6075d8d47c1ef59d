#include "services/syncer/virtual_cluster_watches.h"

#include <spdlog/spdlog.h>

#include "services/kube/config.h"
#include "services/kube/resources.h"
#include "tenancy/sync/bookkeeping.h"
#include "tenancy/sync/pod_references.h"

namespace septa::syncer {

using nlohmann::json;
using tenancy::sync::CopiedKind;

namespace {

std::string NodeNameOf(const json& pod) {
  auto spec = pod.find("spec");
  if (spec == pod.end() || !spec->is_object()) return "";
  auto node = spec->find("nodeName");
  return node != spec->end() && node->is_string() ? node->get<std::string>() : "";
}

// An informer's first list not loaded in time, and why (the last failed
// list: an API server that cannot be reached says so here).
Status NotListed(const std::string& tenant, const std::string& vcluster, const std::string& what,
                 std::chrono::milliseconds timeout, const kube::Informer& informer) {
  std::string message = "virtual cluster " + tenancy::VirtualClusterText(tenant, vcluster) + ": its " + what +
                        " were not listed within " + std::to_string(timeout.count()) + " ms";
  if (Status why = informer.last_list_error(); !why.ok()) message += ": " + why.ToString();
  return Status(Code::kUnavailable, message);
}

// What an informer on a virtual cluster says of an object its list left
// out (nested past the document bound, which a real API server on the host
// does not keep): the rest of the kind is synced, that object is not.
std::function<void(const std::string&)> LeftOut(const std::string& tenant, const std::string& vcluster,
                                                const std::string& what) {
  return [tenant, vcluster, what](const std::string& item) {
    spdlog::warn("syncer: virtual cluster {}: {} {} is not synced: {}", tenancy::VirtualClusterText(tenant, vcluster),
                 what, item.substr(0, item.find(": ")), item.substr(item.find(": ") + 2));
  };
}

}  // namespace

WatchedCluster::WatchedCluster(std::string tenant, std::string vcluster, std::unique_ptr<kube::Client> client,
                               std::optional<core::WorkloadEndpoints> endpoints, ObjectInformerFactory start_objects,
                               std::chrono::milliseconds start_timeout)
    : ref_{std::move(tenant), std::move(vcluster)},
      client_(std::move(client)),
      endpoints_(std::move(endpoints)),
      start_objects_(std::move(start_objects)),
      start_timeout_(start_timeout) {}

WatchedCluster::~WatchedCluster() { StopInformers(); }

void WatchedCluster::StopInformers() {
  if (pods_) pods_->Stop();
  std::lock_guard lock(objects_mu_);
  stopped_ = true;
  for (auto& [resource, informer] : objects_) informer->Stop();
}

Result<kube::Informer*> WatchedCluster::Objects(const kube::Resource& resource) {
  kube::Informer* informer = nullptr;
  {
    std::lock_guard lock(objects_mu_);
    if (stopped_) return Status(Code::kUnavailable, "virtual cluster " + ref_.ToString() + ": not watched");
    auto& slot = objects_[resource.resource];
    if (!slot) {
      slot = start_objects_(*client_, resource);
      spdlog::debug("syncer: watching the {} of virtual cluster {}", resource.resource, ref_.ToString());
    }
    informer = slot.get();
  }
  // Waited for outside the lock: a worker that needs another kind is not held up.
  if (!informer->WaitForSync(start_timeout_)) {
    return NotListed(ref_.tenant, ref_.vcluster, resource.resource, start_timeout_, *informer);
  }
  return informer;
}

bool WatchedCluster::WatchesObjects(const kube::Resource& resource) const {
  std::lock_guard lock(objects_mu_);
  return objects_.contains(resource.resource);
}

SyncedCluster WatchedCluster::synced() const {
  std::lock_guard lock(mu_);
  return synced_;
}

void WatchedCluster::Update(const SyncedCluster& synced) {
  std::lock_guard lock(mu_);
  synced_ = synced;
}

bool WatchedCluster::Refused(const PodKey& key, bool refused) {
  std::lock_guard lock(mu_);
  return refused ? refused_.insert(key).second : refused_.erase(key) > 0;
}

bool WatchedCluster::IsRefused(const PodKey& key) const {
  std::lock_guard lock(mu_);
  return refused_.contains(key);
}

std::vector<PodKey> WatchedCluster::refused() const {
  std::lock_guard lock(mu_);
  return {refused_.begin(), refused_.end()};
}

void WatchedCluster::Wait(WaitingFor what, const std::string& resource, const std::string& host_name,
                          const std::string& ns, const SyncerKey& key) {
  std::lock_guard lock(mu_);
  waiting_[what][{resource, host_name}][key] = ns;
}

std::vector<SyncerKey> WatchedCluster::Take(WaitingFor what, const std::string& resource, const std::string& host_name,
                                            const std::string& ns) {
  Waiting& waiting = waiting_[what];
  auto it = waiting.find({resource, host_name});
  if (it == waiting.end()) return {};
  std::vector<SyncerKey> keys;
  for (auto key = it->second.begin(); key != it->second.end();) {
    if (key->second == ns) {  // a key of its own namespace frees nothing for it
      ++key;
      continue;
    }
    keys.push_back(key->first);
    key = it->second.erase(key);
  }
  if (it->second.empty()) waiting.erase(it);
  return keys;
}

std::vector<SyncerKey> WatchedCluster::TakeWaiting(const std::string& resource, const std::string& host_name,
                                                   const std::string& ns) {
  std::lock_guard lock(mu_);
  return Take(WaitingFor::kHolder, resource, host_name, ns);
}

std::vector<SyncerKey> WatchedCluster::TakeUsersWaiting(const json& pod) {
  namespace tsync = tenancy::sync;
  const std::string ns = tsync::MetadataField(pod, "namespace");
  std::vector<SyncerKey> keys;
  std::lock_guard lock(mu_);
  auto take = [&](const kube::Resource& resource, const std::string& name) {
    for (SyncerKey& key :
         Take(WaitingFor::kUser, resource.resource, tsync::HostObjectName(name, ns, ref_.vcluster), ns))
      keys.push_back(std::move(key));
  };
  for (const tsync::ObjectRef& ref : tsync::ReferencedObjects(pod)) take(ResourceOf(ref.kind), ref.name);
  for (const std::string& claim : tsync::ReferencedClaims(pod)) take(kube::kPersistentVolumeClaims, claim);
  return keys;
}

VirtualClusterWatches::VirtualClusterWatches(core::ControlPlanes& planes, kube::ClientOptions client_options,
                                             EnqueueKey enqueue)
    : planes_(planes), client_options_(std::move(client_options)), enqueue_(std::move(enqueue)) {}

VirtualClusterWatches::~VirtualClusterWatches() { StopAll(); }

Result<std::shared_ptr<WatchedCluster>> VirtualClusterWatches::Watch(const SyncedCluster& synced,
                                                                     std::chrono::milliseconds timeout) {
  const std::string& tenant = synced.view.tenant;
  const std::string& vcluster = synced.view.vcluster;
  const VirtualClusterRef ref{tenant, vcluster};
  if (auto found = Find(ref)) {
    found->Update(synced);
    return found;
  }
  auto kubeconfig = planes_.SyncerKubeconfig(tenant, vcluster);
  if (!kubeconfig.ok()) return kubeconfig.status();
  auto config = kube::ParseKubeconfig(*kubeconfig);
  if (!config.ok()) return config.status();
  auto client = kube::Client::Create(*std::move(config), client_options_);
  if (!client.ok()) return client.status();
  auto endpoints = planes_.WorkloadEndpointsOf(tenant, vcluster);
  if (!endpoints.ok()) return endpoints.status();
  auto start_objects = [this, ref, tenant, vcluster](kube::Client& client, const kube::Resource& resource) {
    auto enqueue_object = [this, ref, resource](const json& object) {
      const json md = object.value("metadata", json::object());
      if (auto key = ObjectKeyOf(ref, resource, md.value("namespace", ""), md.value("name", ""))) enqueue_(*key);
    };
    kube::InformerHandlers handlers;
    handlers.on_add = enqueue_object;
    handlers.on_update = [enqueue_object](const json&, const json& object) { enqueue_object(object); };
    handlers.on_delete = enqueue_object;
    auto informer = std::make_unique<kube::Informer>(client, resource, "", kube::ListOptions{}, handlers);
    informer->OnLeftOut(LeftOut(tenant, vcluster, resource.resource));
    informer->Start();
    return informer;
  };
  auto watched = std::make_shared<WatchedCluster>(tenant, vcluster, *std::move(client), *std::move(endpoints),
                                                  start_objects, timeout);
  watched->Update(synced);
  auto key_of = [ref](const json& pod) {
    const json md = pod.value("metadata", json::object());
    return PodKey{ref, md.value("namespace", ""), md.value("name", "")};
  };
  // A pod bound to a node, or gone from one, changes the nodes shown.
  const NodesKey nodes_key{ref};
  kube::InformerHandlers handlers;
  // The virtual cluster's services matter once it has a pod: its first
  // one has the cluster's key start their watch (SyncerController).
  WatchedCluster* self = watched.get();
  const ClusterKey cluster_key{ref};
  handlers.on_add = [this, self, key_of, nodes_key, cluster_key](const json& pod) {
    // The first list's pods are the first sweep's (SyncerController's
    // reconcile of the cluster key, which starts this watch and lists the
    // pods once it returns): queued here too, each would be looked at twice.
    if (!self->pods_listed_.load()) return;
    enqueue_(key_of(pod));
    if (!NodeNameOf(pod).empty()) enqueue_(nodes_key);
    if (!self->WatchesObjects(kube::kServices)) enqueue_(cluster_key);
  };
  handlers.on_update = [this, key_of, nodes_key](const json& before, const json& pod) {
    enqueue_(key_of(pod));
    if (NodeNameOf(before) != NodeNameOf(pod)) enqueue_(nodes_key);
  };
  handlers.on_delete = [this, self, key_of, nodes_key, ref](const json& pod) {
    enqueue_(key_of(pod));
    if (!NodeNameOf(pod).empty()) enqueue_(nodes_key);
    // Its token secret goes, and the copies only it used.
    const json md = pod.value("metadata", json::object());
    enqueue_(TokenKey{ref, md.value("namespace", ""), md.value("uid", "")});
    for (const ObjectKey& key : ReferencedObjectKeys(ref, pod)) enqueue_(key);
    // Another namespace's objects of the host names it used may be copied now (name_collisions.h).
    for (const SyncerKey& key : self->TakeUsersWaiting(pod)) enqueue_(key);
  };
  watched->pods_ = std::make_unique<kube::Informer>(watched->client(), kube::kPods, "", kube::ListOptions{}, handlers);
  watched->pods_->OnLeftOut(LeftOut(tenant, vcluster, "pods"));
  watched->pods_->Start();
  if (!watched->pods_->WaitForSync(timeout)) {
    return NotListed(tenant, vcluster, "pods", timeout, *watched->pods_);
  }
  watched->pods_listed_.store(true);
  {
    std::lock_guard lock(mu_);
    auto [it, inserted] = watched_.emplace(ref, watched);
    if (!inserted) {  // another worker started one meanwhile: keep that one
      it->second->Update(synced);
      return it->second;
    }
  }
  spdlog::info("syncer: watching the pods of virtual cluster {}", ref.ToString());
  return watched;
}

void VirtualClusterWatches::Unwatch(const VirtualClusterRef& cluster) {
  std::shared_ptr<WatchedCluster> gone;
  {
    std::lock_guard lock(mu_);
    auto it = watched_.find(cluster);
    if (it == watched_.end()) return;
    gone = std::move(it->second);
    watched_.erase(it);
  }
  gone->StopInformers();
  spdlog::info("syncer: no longer watching virtual cluster {}", cluster.ToString());
}

std::shared_ptr<WatchedCluster> VirtualClusterWatches::Find(const VirtualClusterRef& cluster) const {
  std::lock_guard lock(mu_);
  auto it = watched_.find(cluster);
  return it == watched_.end() ? nullptr : it->second;
}

std::vector<VirtualClusterRef> VirtualClusterWatches::Watched() const {
  std::lock_guard lock(mu_);
  std::vector<VirtualClusterRef> out;
  for (const auto& entry : watched_) out.push_back(entry.first);
  return out;
}

void VirtualClusterWatches::StopAll() {
  std::map<VirtualClusterRef, std::shared_ptr<WatchedCluster>> all;
  {
    std::lock_guard lock(mu_);
    all.swap(watched_);
  }
  for (auto& entry : all) entry.second->StopInformers();
}

}  // namespace septa::syncer
