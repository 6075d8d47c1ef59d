#include "services/syncer/claim_syncer.h"

#include <spdlog/spdlog.h>

#include <set>

#include "services/kube/resources.h"
#include "services/syncer/host_copies.h"
#include "services/syncer/refusal.h"
#include "tenancy/sync/bookkeeping.h"
#include "tenancy/sync/host_claims.h"
#include "tenancy/sync/pod_references.h"

namespace septa::syncer {

using nlohmann::json;
using reconcile::Outcome;
namespace tsync = tenancy::sync;

ClaimSyncer::ClaimSyncer(kube::Client& host, EnqueueKey enqueue, HostInformerRef host_pods)
    : host_(host), enqueue_(std::move(enqueue)), host_pods_(std::move(host_pods)) {}

ClaimSyncer::~ClaimSyncer() { Stop(); }

Status ClaimSyncer::Start(std::chrono::milliseconds timeout) {
  kube::ListOptions synced;
  synced.label_selector = std::string(tsync::kSyncedLabel) + "=true";
  kube::InformerHandlers handlers;
  handlers.on_add = [this](const json& copy) { OnHostClaim(copy); };
  handlers.on_update = [this](const json&, const json& copy) { OnHostClaim(copy); };
  handlers.on_delete = [this](const json& copy) { OnHostClaim(copy); };
  host_claims_ = std::make_unique<kube::Informer>(host_, kube::kPersistentVolumeClaims, "", synced, handlers);
  host_claims_->Start();
  if (!host_claims_->WaitForSync(timeout)) {
    return Status(Code::kUnavailable, "syncer: the host's synced persistent volume claims were not listed within " +
                                          std::to_string(timeout.count()) + " ms");
  }
  return Status::Ok();
}

void ClaimSyncer::Stop() {
  if (host_claims_) host_claims_->Stop();
}

void ClaimSyncer::OnHostClaim(const json& host_claim) {
  if (auto key = KeyOfHostCopy(host_claim, kube::kPersistentVolumeClaims)) enqueue_(*key);
}

std::vector<ObjectKey> ClaimSyncer::ClaimKeys(const std::string& host_namespace,
                                              const VirtualClusterRef& cluster) const {
  std::set<ObjectKey> keys;
  AddHostCopyKeys(keys, *host_claims_, host_namespace, cluster, kube::kPersistentVolumeClaims);
  return {keys.begin(), keys.end()};
}

Result<std::optional<tsync::Refusal>> ClaimSyncer::ClaimsRefusal(WatchedCluster& cluster, const json& virtual_pod,
                                                                 const PodKey& pod_key) const {
  using Refused = std::optional<tsync::Refusal>;
  const tsync::VirtualClusterView view = cluster.synced().view;
  const std::string ns = tsync::MetadataField(virtual_pod, "namespace");
  if (tsync::ReferencedClaims(virtual_pod).empty()) return Refused();
  auto claims = cluster.Objects(kube::kPersistentVolumeClaims);
  SEPTA_RETURN_IF_ERROR(claims);
  if (auto refused = tsync::EphemeralClaimOfAnother(
          virtual_pod, [&](const std::string& name) { return (*claims)->Get(ns, name); })) {
    return refused;
  }
  for (const std::string& claim : tsync::ReferencedClaims(virtual_pod)) {
    const std::string host_name = tsync::HostObjectName(claim, ns, view.vcluster);
    const std::optional<json> host_copy = host_claims_->Get(view.host_namespace, host_name);
    std::optional<tsync::Refusal> refused;
    if (host_copy) {
      // Copied already: another virtual claim's copy there would be mounted.
      if (auto holder = tsync::OtherHolder(*host_copy, tsync::kClaimKind, ns, claim, view.tenant, view.vcluster)) {
        refused = tsync::HostNameTaken(tsync::kClaimKind, ns, claim, host_name, *holder);
      }
    } else {
      // Not yet: another namespace's pod waits for a claim of that host name.
      refused = UsedByAnotherNamespace(cluster, host_pods_(), tsync::kClaimKind, ns, claim, host_name);
    }
    if (!refused) continue;
    for (auto what : {WatchedCluster::WaitingFor::kHolder, WatchedCluster::WaitingFor::kUser}) {
      cluster.Wait(what, kube::kPersistentVolumeClaims.resource, host_name, ns, pod_key);
    }
    return Refused(tsync::ReferenceRefused(tsync::kClaimKind, ns, claim, *refused));
  }
  return Refused();
}

Outcome ClaimSyncer::Reconcile(WatchedCluster& cluster, const std::string& ns, const std::string& name) {
  const tsync::VirtualClusterView view = cluster.synced().view;
  auto claims = cluster.Objects(kube::kPersistentVolumeClaims);
  if (!claims.ok()) return Outcome::Error(claims.status());
  const std::string host_name = tsync::HostObjectName(name, ns, view.vcluster);
  const std::string text = std::string(tsync::kClaimKind) + " " + ns + "/" + name;
  const ObjectKey key{cluster.ref(), ObjectKind::kClaim, ns, name};
  std::lock_guard placement(cluster.placement_mu());
  const std::optional<json> virtual_claim = (*claims)->Get(ns, name);
  std::optional<json> host_copy = host_claims_->Get(view.host_namespace, host_name);
  std::optional<tsync::VirtualRef> recorded;
  if (host_copy) {
    recorded = tsync::VirtualRefOf(*host_copy, view.tenant, view.vcluster);
    if (!recorded) {
      return Outcome::Error(Status(Code::kFailedPrecondition, view.host_namespace + "/" + host_name +
                                                                  " does not record " + text + ": left alone"));
    }
  } else {
    WakeWaiting(cluster, kube::kPersistentVolumeClaims, host_name, ns, enqueue_);
  }
  // Another virtual claim's copy (another namespace's data): never this one's to delete or write.
  const auto holder = host_copy
                          ? tsync::OtherHolder(*host_copy, tsync::kClaimKind, ns, name, view.tenant, view.vcluster)
                          : std::nullopt;
  if (!virtual_claim || tsync::Deleting(*virtual_claim)) {
    if (!host_copy || holder || tsync::Deleting(*host_copy)) return Outcome::Done();
    if (!virtual_claim) {
      auto live = cluster.client().Get(kube::kPersistentVolumeClaims, ns, name);
      if (live.ok()) return Outcome::Done();  // the cache is behind: its event is on the way
      if (live.status().code() != Code::kNotFound) return Outcome::Error(live.status());
    }
    // The tenant deleted it: so goes its data on the host, as a claim's deletion means.
    return Outcome::Of(DeleteHostCopy(host_, kube::kPersistentVolumeClaims, *host_copy));
  }
  if (holder) {
    if (!WaitFor(cluster, *host_claims_, host_name, kube::kPersistentVolumeClaims, ns, key)) {
      return Outcome::RequeueAfter(std::chrono::nanoseconds(0));  // gone meanwhile
    }
    auto gone = HolderGone(cluster, *holder);
    if (!gone.ok()) return Outcome::Error(gone.status());
    if (!*gone) {
      return Outcome::Of(RefuseObject(cluster, *virtual_claim, std::string(tsync::kClaimKind),
                                      tsync::HostNameTaken(tsync::kClaimKind, ns, name, host_name, *holder)));
    }
    // That claim is gone: its key deletes its copy (its data), which brings this key back.
    enqueue_(ObjectKey{cluster.ref(), ObjectKind::kClaim, holder->ref.ns, holder->ref.name});
    return Outcome::Done();
  }
  if (host_copy && recorded->uid != tsync::MetadataField(*virtual_claim, "uid")) {
    // The copy of an earlier claim of this name: deleted first (its delete event brings the key back).
    return tsync::Deleting(*host_copy) ? Outcome::Done()
                                       : Outcome::Of(DeleteHostCopy(host_, kube::kPersistentVolumeClaims, *host_copy));
  }
  if (!host_copy) {
    // A pod of another namespace that uses this host name would mount the copy.
    if (UsedByAnotherNamespace(cluster, host_pods_(), tsync::kClaimKind, ns, name, host_name)) {
      cluster.Wait(WatchedCluster::WaitingFor::kUser, kube::kPersistentVolumeClaims.resource, host_name, ns, key);
      if (auto used = UsedByAnotherNamespace(cluster, host_pods_(), tsync::kClaimKind, ns, name, host_name)) {
        return Outcome::Of(RefuseObject(cluster, *virtual_claim, std::string(tsync::kClaimKind), *used));
      }
    }
  }
  auto want = tsync::HostClaim(view, *virtual_claim);
  if (!want.ok()) return Outcome::Error(want.status());
  if (auto* refusal = std::get_if<tsync::Refusal>(&*want)) {
    return Outcome::Of(RefuseObject(cluster, *virtual_claim, std::string(tsync::kClaimKind), *refusal));
  }
  const json& wanted = std::get<json>(*want);
  if (!host_copy) {
    auto created = host_.Create(kube::kPersistentVolumeClaims, view.host_namespace, wanted);
    if (IsAlreadyExists(created)) {
      return Outcome::Error(
          Status(Code::kAborted, "the host copy of " + text + " was written meanwhile: looked at again"));
    }
    if (!created.ok()) return Outcome::Error(created.status());
    spdlog::info("syncer: copied {} of {}/{} to {}/{}", text, view.tenant, view.vcluster, view.host_namespace,
                 host_name);
    host_copy = *std::move(created);
  } else if (tsync::Deleting(*host_copy)) {
    return Outcome::Done();  // deleted on the host: made again once it is gone (its delete event)
  } else if (!tsync::ClaimUpToDate(wanted, *host_copy)) {
    auto updated = host_.Update(kube::kPersistentVolumeClaims, view.host_namespace,
                                tsync::ClaimUpdate(wanted, *host_copy));  // 409: read again, never overwritten blindly
    if (!updated.ok()) return Outcome::Error(updated.status());
    spdlog::info("syncer: updated the host copy of {} of {}/{}", text, view.tenant, view.vcluster);
    host_copy = *std::move(updated);
  }
  if (auto status = tsync::ClaimStatusUp(*virtual_claim, *host_copy)) {
    json updated = *virtual_claim;
    updated["status"] = *std::move(status);
    kube::WriteOptions options;
    options.subresource = "status";
    auto written = cluster.client().Update(kube::kPersistentVolumeClaims, ns, updated, options);
    if (!written.ok()) return Outcome::Error(written.status());
  }
  return Outcome::Done();
}

}  // namespace septa::syncer
