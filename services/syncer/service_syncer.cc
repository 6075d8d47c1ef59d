#include "services/syncer/service_syncer.h"

#include <spdlog/spdlog.h>

#include <set>

#include "common/documents.h"
#include "services/kube/resources.h"
#include "services/syncer/host_copies.h"
#include "services/syncer/refusal.h"
#include "tenancy/sync/bookkeeping.h"
#include "tenancy/sync/host_endpoints.h"
#include "tenancy/sync/host_services.h"

namespace septa::syncer {

using nlohmann::json;
using reconcile::Outcome;
namespace tsync = tenancy::sync;

namespace {

// "Service team/web": for errors and logs.
std::string ServiceText(const std::string& ns, const std::string& name) { return "Service " + ns + "/" + name; }

}  // namespace

ServiceSyncer::ServiceSyncer(kube::Client& host, EnqueueKey enqueue, HostPodIps host_pod_ips)
    : host_(host), enqueue_(std::move(enqueue)), host_pod_ips_(std::move(host_pod_ips)) {}

ServiceSyncer::~ServiceSyncer() { Stop(); }

Status ServiceSyncer::Start(std::chrono::milliseconds timeout) {
  kube::ListOptions synced;
  synced.label_selector = std::string(tsync::kSyncedLabel) + "=true";
  kube::InformerHandlers handlers;
  handlers.on_add = [this](const json& copy) { OnHostService(copy); };
  handlers.on_update = [this](const json&, const json& copy) { OnHostService(copy); };
  handlers.on_delete = [this](const json& copy) { OnHostService(copy); };
  host_services_ = std::make_unique<kube::Informer>(host_, kube::kServices, "", synced, handlers);
  host_endpoints_ = std::make_unique<kube::Informer>(host_, kube::kEndpoints, "", synced, handlers);
  for (auto [informer, what] : {std::pair{host_services_.get(), "services"}, {host_endpoints_.get(), "endpoints"}}) {
    informer->Start();
    if (!informer->WaitForSync(timeout)) {
      return Status(Code::kUnavailable, std::string("syncer: the host's synced ") + what + " were not listed within " +
                                            std::to_string(timeout.count()) + " ms");
    }
  }
  return Status::Ok();
}

void ServiceSyncer::Stop() {
  if (host_services_) host_services_->Stop();
  if (host_endpoints_) host_endpoints_->Stop();
}

void ServiceSyncer::OnHostService(const json& host_service) {
  // A service's endpoints are reconciled with it: both kinds' copies bring back its key.
  if (auto key = KeyOfHostCopy(host_service, kube::kServices)) enqueue_(*key);
}

std::vector<ObjectKey> ServiceSyncer::ServiceKeys(const std::string& host_namespace,
                                                  const VirtualClusterRef& cluster) const {
  std::set<ObjectKey> keys;
  for (const kube::Informer* copies : {host_services_.get(), host_endpoints_.get()}) {
    AddHostCopyKeys(keys, *copies, host_namespace, cluster, kube::kServices);
  }
  return {keys.begin(), keys.end()};
}

std::vector<ObjectKey> ServiceSyncer::KeysOfEndpointsNaming(const json& host_pod) const {
  std::vector<ObjectKey> keys;
  const std::string host_namespace = tsync::MetadataField(host_pod, "namespace");
  const std::string pod = tsync::MetadataField(host_pod, "name");
  if (host_namespace.empty() || pod.empty()) return keys;
  for (const json& copy : host_endpoints_->ListNamespace(host_namespace)) {
    if (!tsync::PodsNamedBy(copy).contains(pod)) continue;
    if (auto key = KeyOfHostCopy(copy, kube::kServices)) keys.push_back(*std::move(key));
  }
  return keys;
}

Outcome ServiceSyncer::Reconcile(WatchedCluster& cluster, const std::string& ns, const std::string& name) {
  // The virtual API server's own service is not the tenant's to sync.
  if (ns == "default" && name == "kubernetes") return Outcome::Done();
  const tsync::VirtualClusterView view = cluster.synced().view;
  auto services = cluster.Objects(kube::kServices);
  if (!services.ok()) return Outcome::Error(services.status());
  const std::string host_name = tsync::HostObjectName(name, ns, view.vcluster);
  const std::optional<json> virtual_service = (*services)->Get(ns, name);
  std::optional<json> host_copy = host_services_->Get(view.host_namespace, host_name);
  if (host_copy && !tsync::VirtualRefOf(*host_copy, view.tenant, view.vcluster)) {
    return Outcome::Error(
        Status(Code::kFailedPrecondition,
               view.host_namespace + "/" + host_name + " does not record " + ServiceText(ns, name) + ": left alone"));
  }
  if (!host_copy) WakeWaiting(cluster, kube::kServices, host_name, ns, enqueue_);
  // Another virtual service's copy (tenancy/sync/name_collisions.h): never this one's to delete or write.
  const auto holder = host_copy
                          ? tsync::OtherHolder(*host_copy, tsync::kServiceKind, ns, name, view.tenant, view.vcluster)
                          : std::nullopt;
  if (!virtual_service) {
    if (Status endpoints = SyncEndpoints(cluster, ns, name, nullptr); !endpoints.ok()) return Outcome::Error(endpoints);
    return host_copy && !holder ? VirtualGone(cluster, ns, name, *host_copy) : Outcome::Done();
  }
  if (holder) {
    if (Status endpoints = SyncEndpoints(cluster, ns, name, nullptr); !endpoints.ok()) return Outcome::Error(endpoints);
    const ObjectKey key{cluster.ref(), ObjectKind::kService, ns, name};
    if (!WaitFor(cluster, *host_services_, host_name, kube::kServices, ns, key)) {
      return Outcome::RequeueAfter(std::chrono::nanoseconds(0));  // gone meanwhile
    }
    auto gone = HolderGone(cluster, *holder);
    if (!gone.ok()) return Outcome::Error(gone.status());
    if (*gone) {
      // That service is gone: its key deletes its copy, which brings this key back.
      enqueue_(ObjectKey{cluster.ref(), ObjectKind::kService, holder->ref.ns, holder->ref.name});
      return Outcome::Done();
    }
    return Outcome::Of(RefuseObject(cluster, *virtual_service, std::string(tsync::kServiceKind),
                                    tsync::HostNameTaken(tsync::kServiceKind, ns, name, host_name, *holder)));
  }
  if (tsync::Readdressing(*virtual_service) && host_copy) {
    // A syncer stopped between its two updates: the record has the rest.
    const std::string record = tsync::MetadataMapString(*host_copy, "annotations", tsync::kServiceRecreateAnnotation);
    auto parsed = ParseJson(record);  // an annotation a tenant may have written: bounded
    json readdressed = parsed.ok() ? *std::move(parsed) : json();
    if (readdressed.is_object() &&
        tsync::MetadataField(readdressed, "uid") == tsync::MetadataField(*virtual_service, "uid")) {
      return FinishReaddressing(cluster, *virtual_service, *std::move(host_copy), std::move(readdressed));
    }
  }

  auto want = tsync::HostService(view, *virtual_service);
  if (!want.ok()) return Outcome::Error(want.status());
  if (auto* refusal = std::get_if<tsync::Refusal>(&*want)) {
    if (Status endpoints = SyncEndpoints(cluster, ns, name, nullptr); !endpoints.ok()) return Outcome::Error(endpoints);
    if (host_copy) {
      if (Status deleted = DeleteHostCopy(host_, kube::kServices, *host_copy); !deleted.ok())
        return Outcome::Error(deleted);
    }
    return Outcome::Of(RefuseObject(cluster, *virtual_service, std::string(tsync::kServiceKind), *refusal));
  }
  json& wanted = std::get<json>(*want);
  if (host_copy && !tsync::ServiceUpdatableInPlace(wanted, *host_copy)) {
    // Headless became addressed or the reverse: the host's address is immutable.
    if (Status deleted = DeleteHostCopy(host_, kube::kServices, *host_copy); !deleted.ok())
      return Outcome::Error(deleted);
    host_copy.reset();
  }
  if (!host_copy) {
    auto created = host_.Create(kube::kServices, view.host_namespace, wanted);
    if (created.ok()) {
      spdlog::info("syncer: copied {} of {}/{} to {}/{}", ServiceText(ns, name), view.tenant, view.vcluster,
                   view.host_namespace, host_name);
      host_copy = *std::move(created);
    } else if (created.status().code() != Code::kAlreadyExists) {
      return Outcome::Error(created.status());
    } else {
      return Outcome::Error(Status(
          Code::kAborted, "the host copy of " + ServiceText(ns, name) + " was written meanwhile: looked at again"));
    }
  } else if (!tsync::ServiceUpToDate(wanted, *host_copy)) {
    // An object of the same name the tenant created again is the same
    // service to the host: updated in place, its address kept.
    wanted["metadata"]["resourceVersion"] = tsync::MetadataField(*host_copy, "resourceVersion");
    auto updated = host_.Update(kube::kServices, view.host_namespace, wanted);
    if (!updated.ok()) return Outcome::Error(updated.status());  // 409: read again, never overwritten blindly
    spdlog::info("syncer: updated the host copy of {} of {}/{}", ServiceText(ns, name), view.tenant, view.vcluster);
    host_copy = *std::move(updated);
  }
  if (auto recreated = tsync::VirtualServiceWithHostIp(*virtual_service, *host_copy)) {
    // Its endpoints follow once the recreated service's event brings the key back.
    return GiveHostIp(cluster, **services, *virtual_service, *std::move(host_copy), *recreated);
  }
  if (Status endpoints = SyncEndpoints(cluster, ns, name, &*virtual_service); !endpoints.ok()) {
    return Outcome::Error(endpoints);
  }
  if (auto status = tsync::ServiceStatusUp(*virtual_service, *host_copy)) {
    json updated = *virtual_service;
    updated["status"] = *std::move(status);
    kube::WriteOptions options;
    options.subresource = "status";
    auto written = cluster.client().Update(kube::kServices, ns, updated, options);
    if (!written.ok()) return Outcome::Error(written.status());
  }
  return Outcome::Done();
}

// The address is immutable, so the service goes to ExternalName (which
// frees it) and back with the host's: two updates of the same object,
// recorded first on the host copy so that a syncer killed in between
// finishes (Reconcile). The syncer never deletes the tenant's service, so a
// service that is gone is one the tenant deleted (VirtualGone).
Outcome ServiceSyncer::GiveHostIp(WatchedCluster& cluster, kube::Informer& virtual_services,
                                  const json& virtual_service, json host_copy, const json& readdressed) {
  const std::string ns = tsync::MetadataField(virtual_service, "namespace"),
                    name = tsync::MetadataField(virtual_service, "name");
  const std::string host_ip = readdressed["spec"]["clusterIP"];
  for (const json& other : virtual_services.List()) {
    if (tsync::StringField(other, "spec", "clusterIP") == host_ip) {
      // Another virtual service holds that address; it gets its own host
      // address in turn, which frees this one.
      return Outcome::Error(Status(Code::kAborted, ServiceText(ns, name) + ": the host's address " + host_ip +
                                                       " is still held in the virtual cluster: tried again"));
    }
  }
  host_copy["metadata"]["annotations"][std::string(tsync::kServiceRecreateAnnotation)] = readdressed.dump();
  auto recorded = host_.Update(kube::kServices, tsync::MetadataField(host_copy, "namespace"), host_copy);
  if (!recorded.ok()) return Outcome::Error(recorded.status());
  // On the read resourceVersion: a tenant's write meanwhile is a 409, and the key is looked at again.
  auto released = cluster.client().Update(kube::kServices, ns, tsync::ReleasedService(virtual_service));
  if (!released.ok()) return Outcome::Error(released.status());
  return FinishReaddressing(cluster, *released, *std::move(recorded), readdressed);
}

Outcome ServiceSyncer::FinishReaddressing(WatchedCluster& cluster, const json& released, json host_copy,
                                          json readdressed) {
  const std::string ns = tsync::MetadataField(released, "namespace"), name = tsync::MetadataField(released, "name");
  readdressed["metadata"]["resourceVersion"] = tsync::MetadataField(released, "resourceVersion");
  auto updated = cluster.client().Update(kube::kServices, ns, readdressed);
  if (!updated.ok()) return Outcome::Error(updated.status());
  spdlog::info("syncer: {} of {}/{} has the host's address {} now", ServiceText(ns, name), cluster.tenant(),
               cluster.vcluster(), tsync::StringField(*updated, "spec", "clusterIP"));
  // The copy records the service as it is now, and the record goes.
  auto want = tsync::HostService(cluster.synced().view, *updated);
  if (!want.ok() || !std::holds_alternative<json>(*want)) return Outcome::Done();  // its event brings the key back
  json finished = std::get<json>(*std::move(want));
  finished["metadata"]["resourceVersion"] = tsync::MetadataField(host_copy, "resourceVersion");
  auto written = host_.Update(kube::kServices, tsync::MetadataField(host_copy, "namespace"), finished);
  return written.ok() ? Outcome::Done() : Outcome::Error(written.status());
}

Outcome ServiceSyncer::VirtualGone(WatchedCluster& cluster, const std::string& ns, const std::string& name,
                                   const json& host_copy) {
  auto live = cluster.client().Get(kube::kServices, ns, name);
  if (live.ok()) return Outcome::Done();  // the cache is behind: its event is on the way
  if (live.status().code() != Code::kNotFound) return Outcome::Error(live.status());
  // The tenant deleted it (the syncer never does), re-addressing or not.
  return Outcome::Of(DeleteHostCopy(host_, kube::kServices, host_copy));
}

Status ServiceSyncer::SyncEndpoints(WatchedCluster& cluster, const std::string& ns, const std::string& name,
                                    const json* virtual_service) {
  const tsync::VirtualClusterView view = cluster.synced().view;
  const std::string host_name = tsync::HostObjectName(name, ns, view.vcluster);
  const std::optional<json> host_copy = host_endpoints_->Get(view.host_namespace, host_name);
  if (host_copy && !tsync::VirtualRefOf(*host_copy, view.tenant, view.vcluster)) {
    return Status(Code::kFailedPrecondition, view.host_namespace + "/" + host_name + " does not record Endpoints " +
                                                 ns + "/" + name + ": left alone");
  }
  if (!host_copy) WakeWaiting(cluster, kube::kEndpoints, host_name, ns, enqueue_);
  // Another virtual object's endpoints: never these ones' to delete or write.
  const auto holder = host_copy
                          ? tsync::OtherHolder(*host_copy, tsync::kEndpointsKind, ns, name, view.tenant, view.vcluster)
                          : std::nullopt;
  std::optional<json> virtual_endpoints;
  if (virtual_service != nullptr && tsync::HasTenantEndpoints(*virtual_service)) {
    auto endpoints = cluster.Objects(kube::kEndpoints);
    if (!endpoints.ok()) return endpoints.status();
    virtual_endpoints = (*endpoints)->Get(ns, name);
  }
  if (!virtual_endpoints) {
    return host_copy && !holder ? DeleteHostCopy(host_, kube::kEndpoints, *host_copy) : Status::Ok();
  }
  if (holder) {
    const ObjectKey key{cluster.ref(), ObjectKind::kService, ns, name};
    if (!WaitFor(cluster, *host_endpoints_, host_name, kube::kEndpoints, ns, key)) {
      return Status(Code::kAborted, "the host name of Endpoints " + ns + "/" + name + " was freed: looked at again");
    }
    return RefuseObject(cluster, *virtual_endpoints, std::string(tsync::kEndpointsKind),
                        tsync::HostNameTaken(tsync::kEndpointsKind, ns, name, host_name, *holder));
  }
  auto want = tsync::HostEndpoints(view, *virtual_endpoints, host_pod_ips_(view));
  if (!want.ok()) return want.status();
  if (auto* refusal = std::get_if<tsync::Refusal>(&*want)) {
    if (host_copy) SEPTA_RETURN_IF_ERROR(DeleteHostCopy(host_, kube::kEndpoints, *host_copy));
    return RefuseObject(cluster, *virtual_endpoints, std::string(tsync::kEndpointsKind), *refusal);
  }
  json& wanted = std::get<json>(*want);
  if (!host_copy) {
    auto created = host_.Create(kube::kEndpoints, view.host_namespace, wanted);
    if (IsAlreadyExists(created)) {
      return Status(Code::kAborted, "the host copy of Endpoints " + ns + "/" + name + " was written meanwhile");
    }
    SEPTA_RETURN_IF_ERROR(created.status());
    spdlog::info("syncer: copied Endpoints {}/{} of {}/{} to {}/{}", ns, name, view.tenant, view.vcluster,
                 view.host_namespace, host_name);
    return Status::Ok();
  }
  if (tsync::EndpointsUpToDate(wanted, *host_copy)) return Status::Ok();
  wanted["metadata"]["resourceVersion"] = tsync::MetadataField(*host_copy, "resourceVersion");
  auto updated = host_.Update(kube::kEndpoints, view.host_namespace, wanted);  // 409: read again
  return updated.ok() ? Status::Ok() : updated.status();
}

}  // namespace septa::syncer
