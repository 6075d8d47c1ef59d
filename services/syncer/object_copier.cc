#include "services/syncer/object_copier.h"

#include <spdlog/spdlog.h>

#include "services/kube/resources.h"
#include "services/syncer/host_copies.h"
#include "services/syncer/refusal.h"
#include "tenancy/sync/bookkeeping.h"
#include "tenancy/sync/object_copies.h"
#include "tenancy/sync/token_secret.h"

namespace septa::syncer {

using nlohmann::json;
using reconcile::Outcome;
using tenancy::sync::CopiedKind;
using tenancy::sync::ObjectRef;
namespace tsync = tenancy::sync;

namespace {

// metadata.<field>[.<key>] of an object read from an API server.
std::string MetadataString(const json& object, const char* field, std::string_view key = {}) {
  return key.empty() ? tsync::StringField(object, "metadata", field) : tsync::MetadataMapString(object, field, key);
}

// "Secret team/password": names only, never values.
std::string ObjectText(const ObjectRef& ref) {
  return std::string(tsync::KindName(ref.kind)) + " " + ref.ns + "/" + ref.name;
}

Status AboutCopy(const ObjectRef& ref, const Status& status) {
  return Status(status.code(), "the host copy of " + ObjectText(ref) + ": " + status.message());
}

// The host refuses the copy for what it is (RefusedByHost): retrying cannot
// help, so it is a refusal the virtual object and the pods that use it are told.
std::optional<tsync::Refusal> HostRefusal(const ObjectRef& ref, const Status& status) {
  return tsync::Refusal{"", AboutCopy(ref, status).message()};
}

}  // namespace

ObjectCopier::ObjectCopier(kube::Client& host, EnqueueKey enqueue, HostInformerRef host_pods)
    : host_(host), enqueue_(std::move(enqueue)), host_pods_(std::move(host_pods)) {}

ObjectCopier::~ObjectCopier() { Stop(); }

Status ObjectCopier::Start(std::chrono::milliseconds timeout) {
  kube::ListOptions synced;
  synced.label_selector = std::string(tsync::kSyncedLabel) + "=true";
  for (CopiedKind kind : {CopiedKind::kConfigMap, CopiedKind::kSecret}) {
    kube::InformerHandlers handlers;
    handlers.on_add = [this, kind](const json& copy) { OnHostCopy(kind, copy); };
    handlers.on_update = [this, kind](const json&, const json& copy) { OnHostCopy(kind, copy); };
    handlers.on_delete = [this, kind](const json& copy) { OnHostCopy(kind, copy); };
    auto& informer = kind == CopiedKind::kConfigMap ? host_config_maps_ : host_secrets_;
    informer = std::make_unique<kube::Informer>(host_, ResourceOf(kind), "", synced, handlers);
    informer->Start();
  }
  for (kube::Informer* informer : {host_config_maps_.get(), host_secrets_.get()}) {
    if (!informer->WaitForSync(timeout)) {
      return Status(Code::kUnavailable, "syncer: the host's synced config maps and secrets were not listed within " +
                                            std::to_string(timeout.count()) + " ms");
    }
  }
  return Status::Ok();
}

void ObjectCopier::Stop() {
  for (auto* informer : {&host_config_maps_, &host_secrets_}) {
    if (*informer) (*informer)->Stop();
  }
}

kube::Informer& ObjectCopier::host_copies(CopiedKind kind) const {
  return kind == CopiedKind::kConfigMap ? *host_config_maps_ : *host_secrets_;
}

void ObjectCopier::OnHostCopy(CopiedKind kind, const json& copy) {
  const VirtualClusterRef cluster{MetadataString(copy, "labels", tsync::kTenantLabel),
                                  MetadataString(copy, "labels", tsync::kVclusterLabel)};
  const std::string written_for = MetadataString(copy, "annotations", tsync::kVirtualKindAnnotation);
  auto ref = tsync::VirtualRefOf(copy, cluster.tenant, cluster.vcluster);
  if (!ref) return;
  if (kind == CopiedKind::kSecret && written_for == tsync::kTokenSecretKind) {
    // A pod's token secret (TokenSecrets): collected when its pod is gone,
    // written again by its pod's key when it went too early.
    enqueue_(TokenKey{cluster, ref->ns, ref->uid});
    enqueue_(PodKey{cluster, ref->ns, ref->name});
    return;
  }
  if (written_for == tsync::KindName(kind)) enqueue_(ObjectKey{cluster, ObjectKindOf(kind), ref->ns, ref->name});
}

std::vector<ObjectKey> ObjectCopier::CopyKeys(const std::string& host_namespace,
                                              const VirtualClusterRef& cluster) const {
  std::vector<ObjectKey> keys;
  if (host_namespace.empty()) return keys;
  for (CopiedKind kind : {CopiedKind::kConfigMap, CopiedKind::kSecret}) {
    for (const json& copy : host_copies(kind).ListNamespace(host_namespace)) {
      if (MetadataString(copy, "annotations", tsync::kVirtualKindAnnotation) != tsync::KindName(kind)) continue;
      if (auto ref = tsync::VirtualRefOf(copy, cluster.tenant, cluster.vcluster)) {
        keys.push_back(ObjectKey{cluster, ObjectKindOf(kind), ref->ns, ref->name});
      }
    }
  }
  return keys;
}

bool ObjectCopier::Referenced(WatchedCluster& cluster, const ObjectRef& ref, bool refused_too) {
  for (const json& pod : cluster.pods().ListNamespace(ref.ns)) {
    if (!refused_too && cluster.IsRefused(PodKey{cluster.ref(), ref.ns, MetadataString(pod, "name")})) {
      continue;
    }
    if (tsync::ReferencedObjects(pod).contains(ref)) return true;
  }
  return false;
}

std::optional<tsync::Refusal> ObjectCopier::HostNameRefusal(WatchedCluster& cluster, const ObjectRef& ref,
                                                            const std::string& host_name,
                                                            const std::optional<json>& host_copy) const {
  const tsync::VirtualClusterView view = cluster.synced().view;
  const std::string_view kind = tsync::KindName(ref.kind);
  if (host_copy) {
    auto holder = tsync::OtherHolder(*host_copy, kind, ref.ns, ref.name, view.tenant, view.vcluster);
    if (holder) return tsync::HostNameTaken(kind, ref.ns, ref.name, host_name, *holder);
    return std::nullopt;
  }
  return UsedByAnotherNamespace(cluster, host_pods_(), kind, ref.ns, ref.name, host_name);
}

Outcome ObjectCopier::Reconcile(WatchedCluster& cluster, const ObjectRef& ref) {
  const tsync::VirtualClusterView view = cluster.synced().view;
  const std::string host_name = tsync::HostObjectName(ref.name, ref.ns, view.vcluster);
  auto objects = cluster.Objects(ref.kind);
  if (!objects.ok()) return Outcome::Error(objects.status());
  std::lock_guard placement(cluster.placement_mu());
  const std::optional<json> virtual_object = (*objects)->Get(ref.ns, ref.name);
  const std::optional<json> host_copy = host_copies(ref.kind).Get(view.host_namespace, host_name);
  if (host_copy && !tsync::VirtualRefOf(*host_copy, view.tenant, view.vcluster)) {
    return Outcome::Error(
        Status(Code::kFailedPrecondition,
               view.host_namespace + "/" + host_name + " does not record " + ObjectText(ref) + ": left alone"));
  }
  // Another virtual object's copy is never this one's to delete.
  const bool own_copy = host_copy && !tsync::OtherHolder(*host_copy, tsync::KindName(ref.kind), ref.ns, ref.name,
                                                         view.tenant, view.vcluster);
  if (!host_copy) WakeWaiting(cluster, ResourceOf(ref.kind), host_name, ref.ns, enqueue_);
  if (!virtual_object) {
    if (!own_copy) return Outcome::Done();
    auto live = cluster.client().Get(ResourceOf(ref.kind), ref.ns, ref.name);
    if (live.ok()) return Outcome::Done();  // the cache is behind: its event is on the way
    if (live.status().code() != Code::kNotFound) return Outcome::Error(live.status());
    return Outcome::Of(DeleteCopy(ref, *host_copy));
  }
  if (!Referenced(cluster, ref, false)) {
    if (own_copy) return Outcome::Of(DeleteCopy(ref, *host_copy));
    // Its pods were refused, maybe for its host name: said on it too (as they
    // are looked at again once that host name is free, so is it).
    std::optional<tsync::Refusal> refused;
    if (Referenced(cluster, ref, true)) refused = HostNameRefusal(cluster, ref, host_name, host_copy);
    if (!refused) return Outcome::Done();
    return Outcome::Of(RefuseObject(cluster, *virtual_object, std::string(tsync::KindName(ref.kind)), *refused));
  }
  auto copied = EnsureCopy(cluster, ref, *virtual_object, host_copy);
  if (!copied.ok()) return Outcome::Error(copied.status());
  if (!*copied) return Outcome::Done();
  return Outcome::Of(RefuseObject(cluster, *virtual_object, std::string(tsync::KindName(ref.kind)), **copied));
}

Result<std::optional<tsync::Refusal>> ObjectCopier::EnsureCopies(WatchedCluster& cluster,
                                                                 const std::set<ObjectRef>& refs,
                                                                 const PodKey& pod_key) {
  if (refs.empty()) return std::optional<tsync::Refusal>();
  const tsync::VirtualClusterView view = cluster.synced().view;
  for (const ObjectRef& ref : refs) {
    auto objects = cluster.Objects(ref.kind);
    SEPTA_RETURN_IF_ERROR(objects);
    const std::string host_name = tsync::HostObjectName(ref.name, ref.ns, view.vcluster);
    std::optional<json> host_copy = host_copies(ref.kind).Get(view.host_namespace, host_name);
    std::optional<json> virtual_object = (*objects)->Get(ref.ns, ref.name);
    std::optional<tsync::Refusal> refused;
    if (virtual_object) {
      auto copied = EnsureCopy(cluster, ref, *virtual_object, std::move(host_copy));
      SEPTA_RETURN_IF_ERROR(copied);
      refused = *std::move(copied);
      // Said on the object too: no pod that may run uses it, so its own key copies nothing.
      if (refused) {
        SEPTA_RETURN_IF_ERROR(RefuseObject(cluster, *virtual_object, std::string(tsync::KindName(ref.kind)), *refused));
      }
    } else {
      // Not there yet (or not in the cache yet), and its host name is
      // another's copy, or a host name another namespace's pod uses: the
      // pod would mount that one's.
      refused = HostNameRefusal(cluster, ref, host_name, host_copy);
    }
    if (!refused) continue;
    // Looked at again when that host name is free, of another's copy or pod.
    for (auto what : {WatchedCluster::WaitingFor::kHolder, WatchedCluster::WaitingFor::kUser}) {
      cluster.Wait(what, ResourceOf(ref.kind).resource, host_name, ref.ns, pod_key);
    }
    return std::optional(tsync::ReferenceRefused(tsync::KindName(ref.kind), ref.ns, ref.name, *refused));
  }
  return std::optional<tsync::Refusal>();
}

Result<std::optional<tsync::Refusal>> ObjectCopier::EnsureCopy(WatchedCluster& cluster, const ObjectRef& ref,
                                                               const json& virtual_object,
                                                               std::optional<json> host_copy) {
  const tsync::VirtualClusterView view = cluster.synced().view;
  auto want = tsync::HostCopy(ref.kind, view, virtual_object);
  if (!want.ok() && RefusedByHost(want.status())) return HostRefusal(ref, want.status());
  if (!want.ok()) return AboutCopy(ref, want.status());
  const kube::Resource& resource = ResourceOf(ref.kind);
  const std::string host_name = MetadataString(*want, "name");
  const std::string virtual_uid = MetadataString(virtual_object, "uid");
  const ObjectKey key{cluster.ref(), ObjectKindOf(ref.kind), ref.ns, ref.name};
  auto records_this = [&](const json& copy) {
    auto recorded = tsync::VirtualRefOf(copy, view.tenant, view.vcluster);
    return recorded && recorded->uid == virtual_uid;
  };
  if (host_copy && !records_this(*host_copy)) {
    if (!tsync::VirtualRefOf(*host_copy, view.tenant, view.vcluster)) {
      return AboutCopy(ref, Status(Code::kFailedPrecondition, "the host object of that name is not its copy"));
    }
    auto holder =
        tsync::OtherHolder(*host_copy, tsync::KindName(ref.kind), ref.ns, ref.name, view.tenant, view.vcluster);
    // Another virtual object's: refused while that one is there, never
    // overwritten; looked at again once its copy is gone.
    if (holder && WaitFor(cluster, host_copies(ref.kind), host_name, resource, ref.ns, key)) {
      auto gone = HolderGone(cluster, *holder);
      if (!gone.ok()) return AboutCopy(ref, gone.status());
      if (!*gone) {
        return std::optional(tsync::HostNameTaken(tsync::KindName(ref.kind), ref.ns, ref.name, host_name, *holder));
      }
    }
    // Stale: copied from an earlier object of that name, or from one that is gone.
    if (!holder || host_copies(ref.kind).Get(view.host_namespace, host_name)) {
      SEPTA_RETURN_IF_ERROR(DeleteCopy(ref, *host_copy));
    }
    host_copy.reset();
  }
  if (!host_copy) {
    // A pod of another namespace that uses this host name would mount the copy.
    if (UsedByAnotherNamespace(cluster, host_pods_(), tsync::KindName(ref.kind), ref.ns, ref.name, host_name)) {
      cluster.Wait(WatchedCluster::WaitingFor::kUser, resource.resource, host_name, ref.ns, key);
      if (auto used =
              UsedByAnotherNamespace(cluster, host_pods_(), tsync::KindName(ref.kind), ref.ns, ref.name, host_name)) {
        return used;
      }
    }
    auto created = host_.Create(resource, view.host_namespace, *want);
    if (created.ok()) {
      spdlog::info("syncer: copied {} of {} to {}/{}", ObjectText(ref), cluster.ref().ToString(), view.host_namespace,
                   host_name);
      return std::optional<tsync::Refusal>();
    }
    if (RefusedByHost(created.status())) return HostRefusal(ref, created.status());
    if (created.status().code() != Code::kAlreadyExists) return AboutCopy(ref, created.status());
    // Written meanwhile for another pod, before the cache showed it.
    auto live = host_.Get(resource, view.host_namespace, host_name);
    if (!live.ok()) return AboutCopy(ref, live.status());
    if (!records_this(*live)) {
      return AboutCopy(ref, Status(Code::kAborted, "another object's copy is there: looked at again"));
    }
    host_copy = *std::move(live);
  }
  if (tsync::CopyUpToDate(*want, *host_copy)) return std::optional<tsync::Refusal>();
  json update = *std::move(want);
  update["metadata"]["resourceVersion"] = MetadataString(*host_copy, "resourceVersion");
  auto updated = host_.Update(resource, view.host_namespace, update);
  if (!updated.ok() && RefusedByHost(updated.status())) return HostRefusal(ref, updated.status());
  if (!updated.ok()) return AboutCopy(ref, updated.status());  // 409: read again, never overwritten blindly
  spdlog::info("syncer: updated the host copy of {} of {}/{}", ObjectText(ref), view.tenant, view.vcluster);
  return std::optional<tsync::Refusal>();
}

Status ObjectCopier::DeleteCopy(const ObjectRef& ref, const json& host_copy) {
  Status deleted = DeleteHostCopy(host_, ResourceOf(ref.kind), host_copy);
  return deleted.ok() ? deleted : AboutCopy(ref, deleted);
}

}  // namespace septa::syncer
