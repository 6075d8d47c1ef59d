#include "services/syncer/event_copier.h"

#include <spdlog/spdlog.h>

#include "services/kube/resources.h"
#include "tenancy/sync/bookkeeping.h"
#include "tenancy/sync/virtual_events.h"

namespace septa::syncer {

using nlohmann::json;
using reconcile::Outcome;
namespace tsync = tenancy::sync;

namespace {

bool WrittenBySyncer(const json& virtual_event) {
  const json annotations = virtual_event.value("metadata", json::object()).value("annotations", json::object());
  return annotations.is_object() && annotations.contains(std::string(tsync::kHostEventUidAnnotation));
}

}  // namespace

EventCopier::EventCopier(kube::Client& host, EnqueueKey enqueue) : host_(host), enqueue_(std::move(enqueue)) {}

EventCopier::~EventCopier() { Stop(); }

Status EventCopier::Start(kube::Informer& host_pods, std::chrono::milliseconds timeout) {
  host_pods_ = &host_pods;
  kube::InformerHandlers handlers;
  auto on_event = [this](const json& event) {
    if (auto key = KeyOf(event)) enqueue_(*key);
  };
  handlers.on_add = on_event;
  handlers.on_update = [on_event](const json&, const json& event) { on_event(event); };
  kube::ListOptions about_pods;
  about_pods.field_selector = "involvedObject.kind=Pod";
  host_events_ = std::make_unique<kube::Informer>(host_, kube::kEvents, "", about_pods, handlers);
  host_events_->Start();
  if (!host_events_->WaitForSync(timeout)) {
    return Status(Code::kUnavailable, "syncer: the host's events about pods were not listed within " +
                                          std::to_string(timeout.count()) + " ms");
  }
  return Status::Ok();
}

void EventCopier::Stop() {
  if (host_events_) host_events_->Stop();
}

std::optional<EventKey> EventCopier::KeyOf(const json& event) const {
  const std::string ns = tsync::StringField(event, "metadata", "namespace");
  const std::optional<json> pod = host_pods_->Get(ns, tsync::StringField(event, "involvedObject", "name"));
  if (!pod) return std::nullopt;
  VirtualClusterRef cluster{tsync::MetadataMapString(*pod, "labels", tsync::kTenantLabel),
                            tsync::MetadataMapString(*pod, "labels", tsync::kVclusterLabel)};
  if (cluster.tenant.empty() || cluster.vcluster.empty()) return std::nullopt;
  return EventKey{std::move(cluster), ns, tsync::StringField(event, "metadata", "name")};
}

std::vector<EventKey> EventCopier::EventKeys(const std::string& host_namespace,
                                             const VirtualClusterRef& cluster) const {
  std::vector<EventKey> keys;
  if (host_namespace.empty()) return keys;
  for (const json& event : host_events_->ListNamespace(host_namespace)) {
    if (auto key = KeyOf(event); key && key->cluster == cluster) keys.push_back(*std::move(key));
  }
  return keys;
}

Outcome EventCopier::Reconcile(WatchedCluster& cluster, const std::string& host_namespace, const std::string& name) {
  const tsync::VirtualClusterView view = cluster.synced().view;
  if (host_namespace != view.host_namespace) return Outcome::Done();  // not its namespace (any more)
  const std::optional<json> host_event = host_events_->Get(host_namespace, name);
  if (!host_event) return Outcome::Done();  // its copy goes with the virtual API server's event TTL
  const std::string host_pod_name = tsync::StringField(*host_event, "involvedObject", "name");
  const std::optional<json> host_pod = host_pods_->Get(host_namespace, host_pod_name);
  if (!host_pod) return Outcome::Done();  // about a pod that is gone or was never synced
  const std::optional<tsync::VirtualRef> pod = tsync::VirtualRefOf(*host_pod, view.tenant, view.vcluster);
  if (!pod) return Outcome::Done();
  std::optional<json> want = tsync::VirtualEvent(*host_event, host_namespace, host_pod_name, *pod);
  if (!want) return Outcome::Done();
  const std::string virtual_name = (*want)["metadata"]["name"];
  auto existing = cluster.client().Get(kube::kEvents, pod->ns, virtual_name);
  if (!existing.ok()) {
    if (existing.status().code() != Code::kNotFound) return Outcome::Error(existing.status());
    auto created = cluster.client().Create(kube::kEvents, pod->ns, *want);
    return created.ok() ? Outcome::Done() : Outcome::Error(created.status());  // AlreadyExists: re-read on the retry
  }
  if (tsync::VirtualEventUpToDate(*existing, *want)) return Outcome::Done();
  if (!WrittenBySyncer(*existing)) {
    spdlog::warn("syncer: virtual event {}/{} of {}/{} was not written by the syncer: left alone", pod->ns,
                 virtual_name, view.tenant, view.vcluster);
    return Outcome::Done();
  }
  (*want)["metadata"]["resourceVersion"] = (*existing)["metadata"].value("resourceVersion", "");
  auto updated = cluster.client().Update(kube::kEvents, pod->ns, *want);
  return updated.ok() ? Outcome::Done() : Outcome::Error(updated.status());  // 409: re-read on the retry
}

}  // namespace septa::syncer
