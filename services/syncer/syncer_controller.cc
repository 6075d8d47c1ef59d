#include "services/syncer/syncer_controller.h"

#include <prometheus/histogram.h>
#include <prometheus/registry.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <set>

#include "services/kube/config.h"
#include "services/kube/resources.h"
#include "services/reconcile/virtual_cluster_keys.h"
#include "services/syncer/host_copies.h"
#include "services/syncer/refusal.h"
#include "services/syncer/virtual_node_sync.h"
#include "tenancy/sync/bookkeeping.h"
#include "tenancy/sync/host_endpoints.h"
#include "tenancy/sync/name_collisions.h"
#include "tenancy/sync/pod_references.h"
#include "tenancy/sync/virtual_nodes.h"

namespace septa::syncer {

using nlohmann::json;
using reconcile::Outcome;
namespace tsync = tenancy::sync;

namespace {

// Reconciles `key` of a watched virtual cluster; the keys of one not
// watched (not READY, or another replica's) do nothing.
template <class Key, class Reconcile>
Outcome OnWatched(const VirtualClusterWatches& watches, const Key& key, Reconcile&& reconcile) {
  std::shared_ptr<WatchedCluster> cluster = watches.Find(key.cluster);
  return cluster ? reconcile(*cluster) : Outcome::Done();
}

std::string PhaseOf(const json& pod) { return tsync::StringField(pod, "status", "phase"); }

// A virtual pod that had started: bound to a node by the syncer (a node
// name the tenant wrote into a new pod is refused by the translation, not
// taken for a start), or past Pending.
bool Started(const json& virtual_pod) {
  const std::string phase = PhaseOf(virtual_pod);
  return tsync::BoundToNode(virtual_pod) || phase == "Running" || phase == "Succeeded" || phase == "Failed";
}

std::optional<long> GracePeriodOf(const json& pod) {
  auto md = pod.find("metadata");
  if (md == pod.end() || !md->is_object()) return std::nullopt;
  auto grace = md->find("deletionGracePeriodSeconds");
  if (grace == md->end() || !grace->is_number_integer()) return std::nullopt;
  return grace->get<long>();
}

std::string LabelOf(const json& object, std::string_view key) {
  return tsync::MetadataMapString(object, "labels", key);
}

Outcome Failed(const Status& status) { return Outcome::Error(status); }

// The translation's settings for a virtual cluster's pods: septad's, with
// the cluster's own API server and DNS where it has them (a control plane
// on the host).
tsync::SyncSettings SettingsFor(const tsync::SyncSettings& configured, const WatchedCluster& cluster) {
  tsync::SyncSettings settings = configured;
  if (const auto& own = cluster.endpoints()) {
    settings.virtual_api_host = own->api_host;
    settings.virtual_api_port = own->api_port;
    settings.dns_nameserver = own->dns_nameserver;
  }
  return settings;
}

}  // namespace

SyncerController::SyncerController(SyncerOptions options, core::Store& store, kube::Client& host,
                                   core::ControlPlanes& planes, const Clock& clock, prometheus::Registry& metrics)
    : options_(std::move(options)),
      store_(store),
      host_(host),
      clock_(clock),
      watches_(planes, options_.virtual_client, [this](const SyncerKey& key) { controller_.Enqueue(key); }),
      controller_(reconcile::ControllerOptions<SyncerKey>{.name = "syncer",
                                                          .workers = options_.workers,
                                                          .list_keys = [this] { return ListKeys(); },
                                                          .shards = options_.shards,
                                                          .shard_key = SyncerShardKey},
                  *this, clock, metrics),
      copies_(
          host, [this](const SyncerKey& key) { EnqueueFromHost(key); },
          [this]() -> const kube::Informer& { return *host_pods_; }),
      services_(
          host, [this](const SyncerKey& key) { EnqueueFromHost(key); },
          [this](const tsync::VirtualClusterView& view) { return HostPodIps(view); }),
      claims_(
          host, [this](const SyncerKey& key) { EnqueueFromHost(key); },
          [this]() -> const kube::Informer& { return *host_pods_; }),
      events_(host, [this](const SyncerKey& key) { EnqueueFromHost(key); }),
      tokens_(
          host, [this]() -> const kube::Informer& { return copies_.host_secrets(); }, clock),
      pod_groups_(host) {
  sync_latency_ =
      &prometheus::BuildHistogram()
           .Name("septa_syncer_pod_sync_latency_seconds")
           .Help("From a virtual pod's creation to its host pod's creation by the syncer")
           .Register(metrics)
           .Add({}, prometheus::Histogram::BucketBoundaries{0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60});
}

SyncerController::~SyncerController() { Stop(); }

Status SyncerController::Start(std::chrono::milliseconds timeout) {
  kube::InformerHandlers handlers;
  handlers.on_add = [this](const json& pod) { OnHostPod(pod, false); };
  handlers.on_update = [this](const json&, const json& pod) { OnHostPod(pod, false); };
  handlers.on_delete = [this](const json& pod) { OnHostPod(pod, true); };
  kube::ListOptions synced;
  synced.label_selector = std::string(tsync::kSyncedLabel) + "=true";
  host_pods_ = std::make_unique<kube::Informer>(host_, kube::kPods, "", synced, handlers);
  host_pods_->Start();
  if (!host_pods_->WaitForSync(timeout)) {
    return Status(Code::kUnavailable,
                  "syncer: the host's synced pods were not listed within " + std::to_string(timeout.count()) + " ms");
  }
  SEPTA_RETURN_IF_ERROR(copies_.Start(timeout));
  SEPTA_RETURN_IF_ERROR(services_.Start(timeout));
  SEPTA_RETURN_IF_ERROR(claims_.Start(timeout));
  SEPTA_RETURN_IF_ERROR(events_.Start(*host_pods_, timeout));
  controller_.Start();
  resyncs_ = std::jthread([this](std::stop_token stop) { RunResyncs(stop); });
  return Status::Ok();
}

void SyncerController::Stop() {
  if (resyncs_.joinable()) {
    resyncs_.request_stop();
    resyncs_.join();
  }
  controller_.Stop();
  watches_.StopAll();
  events_.Stop();  // before the host pod informer it reads
  if (host_pods_) host_pods_->Stop();
  copies_.Stop();
  services_.Stop();
  claims_.Stop();
}

void SyncerController::VirtualClusterChanged(std::string_view payload) {
  if (auto cluster = reconcile::DecodeKey<VirtualClusterRef>(payload)) {
    VirtualClusterChanged(*cluster);
  } else {
    Resync();
  }
}

void SyncerController::RunResyncs(std::stop_token stop) {
  TimePoint next_sweep = clock_.Now() + options_.resync_interval;
  while (clock_.SleepUntil(std::min(clock_.Now() + options_.shard_check_interval, next_sweep), stop)) {
    // A lost shard's virtual clusters are another replica's now: their
    // watches stop here (their keys are dropped by the controller already).
    for (const VirtualClusterRef& cluster : watches_.Watched()) {
      if (!controller_.Owns(ClusterKey{cluster})) watches_.Unwatch(cluster);
    }
    if (clock_.Now() < next_sweep) continue;
    controller_.Resync();
    next_sweep = clock_.Now() + options_.resync_interval;
  }
}

Result<std::vector<SyncerKey>> SyncerController::ListKeys() {
  auto stored = reconcile::StoredVirtualClusterKeys(store_);
  SEPTA_RETURN_IF_ERROR(stored);
  std::set<VirtualClusterRef> clusters = std::move(*stored);
  // A watched virtual cluster whose row is gone is looked at too: its watch stops.
  for (VirtualClusterRef& cluster : watches_.Watched()) clusters.insert(std::move(cluster));
  std::vector<SyncerKey> keys;
  keys.reserve(clusters.size());
  for (const VirtualClusterRef& cluster : clusters) keys.emplace_back(ClusterKey{cluster});
  return keys;
}

void SyncerController::OnHostPod(const json& host_pod, bool deleted) {
  const VirtualClusterRef of{LabelOf(host_pod, tsync::kTenantLabel), LabelOf(host_pod, tsync::kVclusterLabel)};
  if (of.tenant.empty() || of.vcluster.empty()) return;
  // A virtual cluster not watched is not READY or another replica's, or
  // its watch is about to start, and then its first sweep looks at every
  // host object in the caches (which have this one: an informer updates
  // its cache before it calls its handlers). At a restart, that is every
  // host object, so each is looked at once, not twice.
  const std::shared_ptr<WatchedCluster> cluster = watches_.Find(of);
  if (!cluster) return;
  auto ref = tsync::VirtualRefOf(host_pod, of.tenant, of.vcluster);
  if (ref) controller_.Enqueue(PodKey{of, ref->ns, ref->name});
  // A pod that gives its IP back (finished, being deleted, gone): the host
  // Endpoints that lead to it are looked at again and go.
  if (deleted || !tsync::HoldsItsIp(host_pod)) {
    for (const ObjectKey& key : services_.KeysOfEndpointsNaming(host_pod)) controller_.Enqueue(key);
  }
  if (!deleted) return;
  if (ref) controller_.Enqueue(TokenKey{of, ref->ns, ref->uid});                    // its token secret may go now
  if (!tsync::HostGangOf(host_pod).empty()) controller_.Enqueue(PodGroupsKey{of});  // its gang may be over
  // What it held of the reservation is free: the refused pods may fit now.
  {
    std::lock_guard placement(cluster->placement_mu());
    cluster->placed_not_cached().erase(tsync::MetadataField(host_pod, "name"));
  }
  for (const PodKey& key : cluster->refused()) controller_.Enqueue(key);
}

void SyncerController::EnqueueFromHost(const SyncerKey& key) {
  if (watches_.Find(ClusterOf(key))) controller_.Enqueue(key);
}

std::map<std::string, std::string> SyncerController::HostPodIps(const tsync::VirtualClusterView& view) const {
  return tsync::LivePodIps(HostPodsOf(view.host_namespace, view.tenant, view.vcluster));
}

std::vector<json> SyncerController::HostPodsOf(const std::string& host_namespace, const std::string& tenant,
                                               const std::string& vcluster) const {
  std::vector<json> out;
  if (host_namespace.empty()) return out;
  for (json& pod : host_pods_->ListNamespace(host_namespace)) {
    if (LabelOf(pod, tsync::kTenantLabel) == tenant && LabelOf(pod, tsync::kVclusterLabel) == vcluster) {
      out.push_back(std::move(pod));
    }
  }
  return out;
}

Outcome SyncerController::Reconcile(const SyncerKey& key) {
  return std::visit([this](const auto& typed) { return ReconcileKey(typed); }, key);
}

Outcome SyncerController::ReconcileKey(const ObjectKey& key) {
  std::shared_ptr<WatchedCluster> cluster = watches_.Find(key.cluster);
  if (!cluster) return Outcome::Done();  // not READY, or another replica's
  switch (key.kind) {
    case ObjectKind::kConfigMap:
      return copies_.Reconcile(*cluster, tsync::ObjectRef{tsync::CopiedKind::kConfigMap, key.ns, key.name});
    case ObjectKind::kSecret:
      return copies_.Reconcile(*cluster, tsync::ObjectRef{tsync::CopiedKind::kSecret, key.ns, key.name});
    case ObjectKind::kService:
    case ObjectKind::kEndpoints:  // a service's endpoints are reconciled with it
      return services_.Reconcile(*cluster, key.ns, key.name);
    case ObjectKind::kClaim: return claims_.Reconcile(*cluster, key.ns, key.name);
  }
  return Outcome::Done();  // unreachable: every kind is above
}

Outcome SyncerController::ReconcileKey(const EventKey& key) {
  return OnWatched(watches_, key,
                   [&](WatchedCluster& cluster) { return events_.Reconcile(cluster, key.host_namespace, key.name); });
}

Outcome SyncerController::ReconcileKey(const TokenKey& key) {
  return OnWatched(watches_, key,
                   [&](WatchedCluster& cluster) { return tokens_.Reconcile(cluster, key.ns, key.uid, *host_pods_); });
}

Outcome SyncerController::ReconcileKey(const NodesKey& key) {
  return OnWatched(watches_, key, [&](WatchedCluster& cluster) { return SyncVirtualNodes(cluster, store_); });
}

Outcome SyncerController::ReconcileKey(const PodGroupsKey& key) {
  return OnWatched(watches_, key, [&](WatchedCluster& cluster) { return CollectPodGroups(cluster); });
}

Outcome SyncerController::ReconcileKey(const ClusterKey& key) {
  const VirtualClusterRef& of = key.cluster;
  auto synced = LoadSyncedCluster(store_, options_.render, of.tenant, of.vcluster);
  if (!synced.ok()) return Failed(synced.status());
  // READY: the control plane serves and the host namespace is there. A
  // virtual cluster being resized (PROVISIONING) or FAILED keeps a watch it
  // has. SLEEPING, DELETING or gone: its pods are left alone (the
  // provisioner deletes the host's).
  using tenancy::VirtualClusterState;
  const bool watched = watches_.Find(of) != nullptr;
  const bool active = synced->has_value() && ((*synced)->state == VirtualClusterState::kReady ||
                                              (watched && ((*synced)->state == VirtualClusterState::kProvisioning ||
                                                           (*synced)->state == VirtualClusterState::kFailed)));
  if (!active) {
    watches_.Unwatch(of);
    return Outcome::Done();
  }
  auto cluster = watches_.Watch(**synced, options_.watch_start_timeout);
  if (!cluster.ok()) return Failed(cluster.status());
  // Every pod of the virtual cluster, on either side, is looked at again:
  // its reservation may have changed, and a resync repairs what a lost
  // event left undone. A converged pod costs a look at two caches. So do
  // the objects the pods use and those copied (an unused one is not looked
  // at: it has nothing on the host). Each key once (a pod is found on both
  // sides), and at low priority: a sweep of every virtual cluster is tens
  // of thousands of keys, and a pod an event asked for must not wait
  // behind them.
  std::set<SyncerKey> keys;
  const auto sweep = [&keys](SyncerKey key) { keys.insert(std::move(key)); };
  const std::vector<json> pods = (*cluster)->pods().List();
  for (const json& pod : pods) {
    sweep(PodKey{of, tsync::MetadataField(pod, "namespace"), tsync::MetadataField(pod, "name")});
    for (ObjectKey& key : ReferencedObjectKeys(of, pod)) sweep(std::move(key));
  }
  const std::string host_namespace = (*cluster)->synced().view.host_namespace;
  // Services matter once a pod may use them; a copy on the host is
  // looked at in any case (its virtual service may be gone).
  const std::vector<ObjectKey> service_keys = services_.ServiceKeys(host_namespace, of);
  if (!pods.empty() || !service_keys.empty()) {
    auto services = (*cluster)->Objects(kube::kServices);
    if (!services.ok()) return Failed(services.status());
    for (const json& service : (*services)->List()) {
      sweep(ObjectKey{of, ObjectKind::kService, tsync::MetadataField(service, "namespace"),
                      tsync::MetadataField(service, "name")});
    }
  }
  for (const ObjectKey& key : service_keys) sweep(key);
  // Claims likewise once a pod uses one.
  const std::vector<ObjectKey> claim_keys = claims_.ClaimKeys(host_namespace, of);
  if (!claim_keys.empty() ||
      std::any_of(pods.begin(), pods.end(), [](const json& pod) { return !tsync::ReferencedClaims(pod).empty(); })) {
    auto claims = (*cluster)->Objects(kube::kPersistentVolumeClaims);
    if (!claims.ok()) return Failed(claims.status());
    for (const json& claim : (*claims)->List()) {
      sweep(ObjectKey{of, ObjectKind::kClaim, tsync::MetadataField(claim, "namespace"),
                      tsync::MetadataField(claim, "name")});
    }
  }
  for (const ObjectKey& key : claim_keys) sweep(key);
  for (const json& host_pod : HostPodsOf(host_namespace, of.tenant, of.vcluster)) {
    if (auto ref = tsync::VirtualRefOf(host_pod, of.tenant, of.vcluster)) sweep(PodKey{of, ref->ns, ref->name});
  }
  for (const ObjectKey& key : copies_.CopyKeys(host_namespace, of)) sweep(key);
  for (const EventKey& key : events_.EventKeys(host_namespace, of)) sweep(key);
  for (const TokenKey& key : tokens_.TokenKeys(host_namespace, of)) sweep(key);
  sweep(NodesKey{of});  // the reservation, and so the capacity shown, may have changed
  // A gang whose last pod went while no syncer ran has a PodGroup left.
  if (options_.settings.scheduler == tenancy::host::Scheduler::kKai && !options_.settings.bind_node_name) {
    sweep(PodGroupsKey{of});
  }
  for (const SyncerKey& key : keys) controller_.Enqueue(key, reconcile::Priority::kLow);
  return Outcome::Done();
}

// The table of docs/ARCHITECTURE.md "The syncer". The caches may lag the
// syncer's own writes: every destructive step is confirmed by a live read.
Outcome SyncerController::ReconcileKey(const PodKey& key) {
  std::shared_ptr<WatchedCluster> cluster = watches_.Find(key.cluster);
  if (!cluster) return Outcome::Done();  // not READY, or another replica's
  const PodKey& pod_key = key;
  const std::string& tenant = key.cluster.tenant;
  const std::string& vcluster = key.cluster.vcluster;
  const std::string host_ns = cluster->synced().view.host_namespace;
  const std::string host_name = tsync::HostObjectName(key.name, key.ns, vcluster);
  const std::optional<json> virtual_pod = cluster->pods().Get(key.ns, key.name);
  std::optional<json> host_pod = host_pods_->Get(host_ns, host_name);
  if (host_pod && !tsync::VirtualRefOf(*host_pod, tenant, vcluster)) {
    return Failed(Status(Code::kFailedPrecondition, "host pod " + host_ns + "/" + host_name +
                                                        " does not record virtual pod " + key.ns + "/" + key.name +
                                                        " of " + key.cluster.ToString() + ": left alone"));
  }
  // The host pod of another virtual pod whose name maps to the same host
  // name (tenancy/sync/name_collisions.h): never this one's, neither to
  // delete nor to write over.
  std::optional<tsync::HostNameHolder> holder;
  if (host_pod) {
    holder = tsync::OtherHolder(*host_pod, "Pod", key.ns, key.name, tenant, vcluster);
    if (holder) host_pod.reset();
  }
  auto host_gone = [&]() -> Result<bool> {
    auto live = host_.Get(kube::kPods, host_ns, host_name);
    if (live.ok()) return tsync::OtherHolder(*live, "Pod", key.ns, key.name, tenant, vcluster).has_value();
    if (IsNotFound(live)) return true;
    return live.status();
  };
  auto delete_host_pod = [&](std::optional<long> grace) -> Outcome {
    kube::DeleteOptions options;
    options.precondition_uid = tsync::MetadataField(*host_pod, "uid");
    options.grace_period_seconds = grace;
    Status deleted = host_.Delete(kube::kPods, host_ns, host_name, options);
    if (deleted.ok() || IsNotFound(deleted)) return Outcome::Done();
    return Failed(deleted);  // 409: another pod of that name now; looked at again
  };

  if (!virtual_pod) {
    cluster->Refused(pod_key, false);
    if (!host_pod) return Outcome::Done();
    auto live = cluster->client().Get(kube::kPods, key.ns, key.name);
    if (live.ok()) return Outcome::Done();  // the cache is behind: its event is on the way
    if (live.status().code() != Code::kNotFound) return Failed(live.status());
    return delete_host_pod(std::nullopt);
  }
  if (host_pod && tsync::VirtualRefOf(*host_pod, tenant, vcluster)->uid != tsync::MetadataField(*virtual_pod, "uid")) {
    return delete_host_pod(std::nullopt);  // stale: written for an earlier pod of that name
  }
  if (tsync::Deleting(*virtual_pod)) {
    if (host_pod) return tsync::Deleting(*host_pod) ? Outcome::Done() : delete_host_pod(GracePeriodOf(*virtual_pod));
    auto gone = host_gone();
    if (!gone.ok()) return Failed(gone.status());
    return *gone ? DeleteVirtualPod(*cluster, *virtual_pod) : Outcome::Done();
  }
  if (!host_pod) {
    if (!Started(*virtual_pod)) {
      if (holder) return HostNameTaken(*cluster, pod_key, *virtual_pod, host_name, *holder);
      return CreateHostPod(*cluster, pod_key, *virtual_pod);
    }
    // Started, and its host pod is gone: bare pods die, controllers
    // recreate theirs; it never stays Running without a host pod. Not while
    // the virtual cluster sleeps (the provisioner deleted its host pods).
    auto gone = host_gone();
    if (!gone.ok()) return Failed(gone.status());
    if (!*gone) return Outcome::Done();
    auto synced = LoadSyncedCluster(store_, options_.render, tenant, vcluster);
    if (!synced.ok()) return Failed(synced.status());
    if (!synced->has_value() || (*synced)->state == tenancy::VirtualClusterState::kSleeping ||
        (*synced)->state == tenancy::VirtualClusterState::kDeleting) {
      return Outcome::Done();
    }
    return DeleteVirtualPod(*cluster, *virtual_pod);
  }
  if (tsync::Deleting(*host_pod)) return Outcome::Done();  // its deletion brings the key back
  // Its host pod is there (a pass that refused it may have raced the one
  // that created it): its objects count as used again.
  if (cluster->Refused(pod_key, false)) {
    for (const ObjectKey& object : ReferencedObjectKeys(key.cluster, *virtual_pod)) {
      controller_.Enqueue(object);
    }
  }
  Outcome synced = SyncUp(*cluster, *virtual_pod, *host_pod);
  const std::string phase = PhaseOf(*host_pod);
  if (synced.kind() != Outcome::Kind::kDone || phase == "Succeeded" || phase == "Failed") return synced;
  // A running pod's token is minted again before it expires.
  auto refresh = tokens_.Ensure(*cluster, *virtual_pod);
  if (!refresh.ok()) return Failed(refresh.status());
  if (!*refresh) return Outcome::Done();
  return Outcome::RequeueAfter(std::max<std::chrono::nanoseconds>(**refresh - clock_.Now(), std::chrono::seconds(1)));
}

Outcome SyncerController::DeleteVirtualPod(WatchedCluster& cluster, const json& virtual_pod) {
  kube::DeleteOptions options;
  options.precondition_uid = tsync::MetadataField(virtual_pod, "uid");
  options.grace_period_seconds = 0;
  Status deleted = cluster.client().Delete(kube::kPods, tsync::MetadataField(virtual_pod, "namespace"),
                                           tsync::MetadataField(virtual_pod, "name"), options);
  if (deleted.ok() || IsNotFound(deleted)) return Outcome::Done();
  return Failed(deleted);
}

Outcome SyncerController::CreateHostPod(WatchedCluster& cluster, const PodKey& key, const json& virtual_pod) {
  const tsync::VirtualClusterView view = cluster.synced().view;
  const std::string host_name = tsync::HostObjectName(tsync::MetadataField(virtual_pod, "name"),
                                                      tsync::MetadataField(virtual_pod, "namespace"), view.vcluster);
  // Its claims are copied (their watch started) by their own keys; the
  // host's scheduler waits for them as it waits for any claim.
  for (const std::string& claim : tsync::ReferencedClaims(virtual_pod)) {
    controller_.Enqueue(
        ObjectKey{cluster.ref(), ObjectKind::kClaim, tsync::MetadataField(virtual_pod, "namespace"), claim});
  }
  std::unique_lock placement(cluster.placement_mu());
  // What the virtual cluster's other pods hold: the host pods the cache has
  // (finished ones hold nothing) and those created but not yet seen there.
  std::vector<tsync::PodAssignment> others;
  std::set<std::string> cached;
  for (const json& pod : HostPodsOf(view.host_namespace, view.tenant, view.vcluster)) {
    const std::string name = tsync::MetadataField(pod, "name");
    cached.insert(name);
    const std::string phase = PhaseOf(pod);
    if (name == host_name || phase == "Succeeded" || phase == "Failed") continue;
    if (auto assignment = tsync::AssignmentOf(pod)) others.push_back(*assignment);
  }
  auto& pending = cluster.placed_not_cached();
  for (auto it = pending.begin(); it != pending.end();) {
    if (cached.contains(it->first)) {
      it = pending.erase(it);
      continue;
    }
    if (it->first != host_name) others.push_back(it->second);
    ++it;
  }
  auto translated = tsync::TranslatePodDown(SettingsFor(options_.settings, cluster), view, virtual_pod, others);
  if (const auto* refusal = std::get_if<tsync::Refusal>(&translated)) {
    placement.unlock();
    return Refuse(cluster, key, virtual_pod, *refusal);
  }
  const tsync::HostPod& host_pod = std::get<tsync::HostPod>(translated);
  // Not refused: from here its objects count as used (ObjectCopier), and
  // their copies are on the host before the pod that mounts them.
  cluster.Refused(key, false);
  // What it uses must be its own namespace's: a host name of another's
  // (tenancy/sync/name_collisions.h) would be mounted or grouped instead.
  auto copied = copies_.EnsureCopies(cluster, tsync::ReferencedObjects(virtual_pod), key);
  if (!copied.ok()) return Failed(copied.status());
  std::optional<tsync::Refusal> taken = *std::move(copied);
  if (!taken) {
    auto claims = claims_.ClaimsRefusal(cluster, virtual_pod, key);
    if (!claims.ok()) return Failed(claims.status());
    taken = *std::move(claims);
  }
  const std::string ns = tsync::MetadataField(virtual_pod, "namespace");
  const auto gang = tsync::GangOf(options_.settings, virtual_pod);
  if (!taken && std::holds_alternative<tsync::Gang>(gang)) {
    const tsync::Gang& member = std::get<tsync::Gang>(gang);
    const std::string group = tsync::HostGangName(member.name, ns, view.vcluster);
    for (const json& pod : HostPodsOf(view.host_namespace, view.tenant, view.vcluster)) {
      const std::string other = tsync::OtherGangNamespace(pod, group, ns);
      if (!other.empty()) taken = tsync::GangNameTaken(ns, member, group, other);
    }
    if (!taken && options_.settings.scheduler == tenancy::host::Scheduler::kKai) {
      auto group_refused = pod_groups_.Ensure(view, ns, member);
      if (!group_refused.ok()) return Failed(group_refused.status());
      taken = *std::move(group_refused);
    }
  }
  if (taken) {
    placement.unlock();
    return Refuse(cluster, key, virtual_pod, *taken);
  }
  if (auto token = tokens_.Ensure(cluster, virtual_pod); !token.ok()) return Failed(token.status());
  auto created = host_.Create(kube::kPods, view.host_namespace, host_pod.object);
  if (!created.ok()) {
    // AlreadyExists: created by an earlier pass the cache had not shown yet.
    if (IsAlreadyExists(created)) return Outcome::Done();
    return Failed(created.status());
  }
  pending[host_name] = host_pod.assignment;
  placement.unlock();
  if (auto created_at = ParseRfc3339(tsync::MetadataField(virtual_pod, "creationTimestamp"))) {
    sync_latency_->Observe(std::max(0.0, std::chrono::duration<double>(clock_.Now() - *created_at).count()));
  }
  return Outcome::Done();
}

// Its host name is another virtual pod's host pod: refused while that pod is
// there; one whose virtual pod is gone is stale, and that pod's key deletes
// it. Either way this key is looked at again when a host pod goes.
Outcome SyncerController::HostNameTaken(WatchedCluster& cluster, const PodKey& key, const json& virtual_pod,
                                        const std::string& host_name, const tsync::HostNameHolder& holder) {
  auto gone = HolderGone(cluster, holder);
  if (!gone.ok()) return Failed(gone.status());
  Outcome outcome = Outcome::Done();
  if (*gone) {
    cluster.Refused(key, true);
    controller_.Enqueue(PodKey{cluster.ref(), holder.ref.ns, holder.ref.name});
  } else {
    outcome = Refuse(cluster, key, virtual_pod,
                     tsync::HostNameTaken("Pod", tsync::MetadataField(virtual_pod, "namespace"),
                                          tsync::MetadataField(virtual_pod, "name"), host_name, holder));
  }
  // That pod may have gone before this key was marked: then nothing would look again.
  if (!host_pods_->Get(cluster.synced().view.host_namespace, host_name)) {
    return Outcome::RequeueAfter(std::chrono::nanoseconds(0));
  }
  return outcome;
}

// The gangs in use are those a virtual pod names (its host pod may not be
// created yet) and those of the host pods (a deleted virtual pod's host pod
// may still run); the placement lock orders this with CreateHostPod.
Outcome SyncerController::CollectPodGroups(WatchedCluster& cluster) {
  const tsync::VirtualClusterView view = cluster.synced().view;
  std::lock_guard placement(cluster.placement_mu());
  std::set<std::string> in_use;
  for (const json& pod : cluster.pods().List()) {
    // A refused member has no host pod and may be refused for its group's
    // host name, which another namespace's gang holds: it keeps no group
    // (one of its own is made again before its host pod is).
    const PodKey pod_key{cluster.ref(), tsync::MetadataField(pod, "namespace"), tsync::MetadataField(pod, "name")};
    if (cluster.IsRefused(pod_key)) continue;
    if (const auto gang = tsync::GangOf(options_.settings, pod); std::holds_alternative<tsync::Gang>(gang)) {
      in_use.insert(
          tsync::HostGangName(std::get<tsync::Gang>(gang).name, tsync::MetadataField(pod, "namespace"), view.vcluster));
    }
  }
  for (const json& pod : HostPodsOf(view.host_namespace, view.tenant, view.vcluster)) {
    if (std::string gang = tsync::HostGangOf(pod); !gang.empty()) in_use.insert(std::move(gang));
  }
  auto collected = pod_groups_.Collect(view, in_use);
  if (!collected.ok()) return Failed(collected.status());
  // A member refused for a group of its host name another gang held may run now.
  if (*collected > 0) {
    for (const PodKey& key : cluster.refused()) controller_.Enqueue(key);
  }
  return Outcome::Done();
}

Outcome SyncerController::Refuse(WatchedCluster& cluster, const PodKey& key, const json& virtual_pod,
                                 const tsync::Refusal& refusal) {
  cluster.Refused(key, true);
  for (const ObjectKey& object : ReferencedObjectKeys(cluster.ref(), virtual_pod)) {
    controller_.Enqueue(object);  // copied before it was refused: unused now
  }
  // The condition is written after the event: when it is there, so is the
  // event, and a retry writes nothing.
  std::optional<json> status = RefusedStatus(virtual_pod, refusal, clock_.Now());
  if (!status) return Outcome::Done();
  const std::string ns = tsync::MetadataField(virtual_pod, "namespace");
  auto event = cluster.client().Create(kube::kEvents, ns, RefusalEvent(virtual_pod, refusal));
  if (!event.ok() && event.status().code() != Code::kAlreadyExists) return Failed(event.status());
  json updated = virtual_pod;
  updated["status"] = *std::move(status);
  kube::WriteOptions options;
  options.subresource = "status";
  auto written = cluster.client().Update(kube::kPods, ns, updated, options);
  if (!written.ok()) return Failed(written.status());  // 409: read again, never overwritten blindly
  spdlog::info("syncer: {} refused: {}", EncodeSyncerKey(key), RefusalText(refusal));
  return Outcome::Done();
}

Outcome SyncerController::SyncUp(WatchedCluster& cluster, const json& virtual_pod, const json& host_pod) {
  const std::string ns = tsync::MetadataField(virtual_pod, "namespace"),
                    name = tsync::MetadataField(virtual_pod, "name");
  if (std::optional<json> patch =
          tsync::HostPodPatch(virtual_pod, host_pod, cluster.synced().view.integration_domains)) {
    auto patched = host_.Patch(kube::kPods, tsync::MetadataField(host_pod, "namespace"),
                               tsync::MetadataField(host_pod, "name"), kube::PatchType::kMerge, patch->dump());
    if (!patched.ok()) return Failed(patched.status());
  }
  const std::string node = tsync::StringField(host_pod, "spec", "nodeName");
  if (!node.empty() && tsync::StringField(virtual_pod, "spec", "nodeName").empty()) {
    const json binding = {{"apiVersion", "v1"},
                          {"kind", "Binding"},
                          {"metadata", {{"name", name}, {"namespace", ns}}},
                          {"target", {{"apiVersion", "v1"}, {"kind", "Node"}, {"name", node}}}};
    auto bound = cluster.client().CreateSubresource(kube::kPods, ns, name, "binding", binding);
    if (!bound.ok()) return Failed(bound.status());
    return Outcome::Done();  // the binding updates the pod: its event brings the key back for the status
  }
  json status = tsync::StatusUp(virtual_pod, host_pod);
  if (status == virtual_pod.value("status", json::object())) return Outcome::Done();
  json updated = virtual_pod;
  updated["status"] = std::move(status);
  kube::WriteOptions options;
  options.subresource = "status";
  auto written = cluster.client().Update(kube::kPods, ns, updated, options);
  if (!written.ok()) return Failed(written.status());  // 409: read again, never overwritten blindly
  return Outcome::Done();
}

}  // namespace septa::syncer
