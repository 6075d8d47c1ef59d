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

}  // namespace

ObjectCopier::ObjectCopier(kube::Client& host, std::function<void(const std::string& key)> enqueue)
    : host_(host), enqueue_(std::move(enqueue)) {}

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
  const std::string tenant = MetadataString(copy, "labels", tsync::kTenantLabel);
  const std::string vcluster = MetadataString(copy, "labels", tsync::kVclusterLabel);
  const std::string written_for = MetadataString(copy, "annotations", tsync::kVirtualKindAnnotation);
  auto ref = tsync::VirtualRefOf(copy, tenant, vcluster);
  if (!ref) return;
  if (kind == CopiedKind::kSecret && written_for == tsync::kTokenSecretKind) {
    // A pod's token secret (TokenSecrets): collected when its pod is gone,
    // written again by its pod's key when it went too early.
    enqueue_(TokenKey(tenant, vcluster, ref->ns, ref->uid));
    enqueue_(PodKey(tenant, vcluster, ref->ns, ref->name));
    return;
  }
  if (written_for == tsync::KindName(kind)) enqueue_(ObjectKey(tenant, vcluster, kind, ref->ns, ref->name));
}

std::vector<std::string> ObjectCopier::CopyKeys(const std::string& host_namespace, const std::string& tenant,
                                                const std::string& vcluster) const {
  std::vector<std::string> keys;
  if (host_namespace.empty()) return keys;
  for (CopiedKind kind : {CopiedKind::kConfigMap, CopiedKind::kSecret}) {
    for (const json& copy : host_copies(kind).ListNamespace(host_namespace)) {
      if (MetadataString(copy, "annotations", tsync::kVirtualKindAnnotation) != tsync::KindName(kind)) continue;
      if (auto ref = tsync::VirtualRefOf(copy, tenant, vcluster)) {
        keys.push_back(ObjectKey(tenant, vcluster, kind, ref->ns, ref->name));
      }
    }
  }
  return keys;
}

bool ObjectCopier::Referenced(WatchedCluster& cluster, const ObjectRef& ref) {
  for (const json& pod : cluster.pods().ListNamespace(ref.ns)) {
    if (cluster.IsRefused(PodKey(cluster.tenant(), cluster.vcluster(), ref.ns, MetadataString(pod, "name")))) continue;
    if (tsync::ReferencedObjects(pod).contains(ref)) return true;
  }
  return false;
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
  if (!virtual_object) {
    if (!host_copy) return Outcome::Done();
    auto live = cluster.client().Get(ResourceOf(ref.kind), ref.ns, ref.name);
    if (live.ok()) return Outcome::Done();  // the cache is behind: its event is on the way
    if (live.status().code() != Code::kNotFound) return Outcome::Error(live.status());
    return Outcome::Of(DeleteCopy(ref, *host_copy));
  }
  if (!Referenced(cluster, ref)) return host_copy ? Outcome::Of(DeleteCopy(ref, *host_copy)) : Outcome::Done();
  Status copied = CopyOrRefuse(cluster, view, ref, *virtual_object, std::move(host_copy));
  return RefusedByHost(copied) ? Outcome::Done() : Outcome::Of(copied);
}

Status ObjectCopier::EnsureCopies(WatchedCluster& cluster, const std::set<ObjectRef>& refs) {
  if (refs.empty()) return Status::Ok();
  const tsync::VirtualClusterView view = cluster.synced().view;
  for (const ObjectRef& ref : refs) {
    auto objects = cluster.Objects(ref.kind);
    SEPTA_RETURN_IF_ERROR(objects);
    std::optional<json> virtual_object = (*objects)->Get(ref.ns, ref.name);
    if (!virtual_object) continue;
    SEPTA_RETURN_IF_ERROR(CopyOrRefuse(
        cluster, view, ref, *virtual_object,
        host_copies(ref.kind).Get(view.host_namespace, tsync::HostObjectName(ref.name, ref.ns, view.vcluster))));
  }
  return Status::Ok();
}

Status ObjectCopier::CopyOrRefuse(WatchedCluster& cluster, const tsync::VirtualClusterView& view, const ObjectRef& ref,
                                  const json& virtual_object, std::optional<json> host_copy) {
  Status copied = EnsureCopy(view, ref, virtual_object, std::move(host_copy));
  if (!RefusedByHost(copied)) return copied;
  // Retrying cannot help: the virtual object says why, once per message.
  SEPTA_RETURN_IF_ERROR(
      RefuseObject(cluster, virtual_object, std::string(tsync::KindName(ref.kind)), {"", copied.message()}));
  return copied;
}

Status ObjectCopier::EnsureCopy(const tsync::VirtualClusterView& view, const ObjectRef& ref, const json& virtual_object,
                                std::optional<json> host_copy) {
  auto want = tsync::HostCopy(ref.kind, view, virtual_object);
  if (!want.ok()) return AboutCopy(ref, want.status());
  const kube::Resource& resource = ResourceOf(ref.kind);
  const std::string host_name = MetadataString(*want, "name");
  const std::string virtual_uid = MetadataString(virtual_object, "uid");
  auto records_this = [&](const json& copy) {
    auto recorded = tsync::VirtualRefOf(copy, view.tenant, view.vcluster);
    return recorded && recorded->uid == virtual_uid;
  };
  if (host_copy && !records_this(*host_copy)) {
    if (!tsync::VirtualRefOf(*host_copy, view.tenant, view.vcluster)) {
      return AboutCopy(ref, Status(Code::kFailedPrecondition, "the host object of that name is not its copy"));
    }
    SEPTA_RETURN_IF_ERROR(DeleteCopy(ref, *host_copy));  // stale: copied from an earlier object of that name
    host_copy.reset();
  }
  if (!host_copy) {
    auto created = host_.Create(resource, view.host_namespace, *want);
    if (created.ok()) {
      spdlog::info("syncer: copied {} of {}/{} to {}/{}", ObjectText(ref), view.tenant, view.vcluster,
                   view.host_namespace, host_name);
      return Status::Ok();
    }
    if (created.status().code() != Code::kAlreadyExists) return AboutCopy(ref, created.status());
    // Written meanwhile for another pod, before the cache showed it.
    auto live = host_.Get(resource, view.host_namespace, host_name);
    if (!live.ok()) return AboutCopy(ref, live.status());
    if (!records_this(*live)) {
      return AboutCopy(ref, Status(Code::kAborted, "another object's copy is there: looked at again"));
    }
    host_copy = *std::move(live);
  }
  if (tsync::CopyUpToDate(*want, *host_copy)) return Status::Ok();
  json update = *std::move(want);
  update["metadata"]["resourceVersion"] = MetadataString(*host_copy, "resourceVersion");
  auto updated = host_.Update(resource, view.host_namespace, update);
  if (!updated.ok()) return AboutCopy(ref, updated.status());  // 409: read again, never overwritten blindly
  spdlog::info("syncer: updated the host copy of {} of {}/{}", ObjectText(ref), view.tenant, view.vcluster);
  return Status::Ok();
}

Status ObjectCopier::DeleteCopy(const ObjectRef& ref, const json& host_copy) {
  Status deleted = DeleteHostCopy(host_, ResourceOf(ref.kind), host_copy);
  return deleted.ok() ? deleted : AboutCopy(ref, deleted);
}

}  // namespace septa::syncer
