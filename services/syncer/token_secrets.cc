#include "services/syncer/token_secrets.h"

#include <spdlog/spdlog.h>

#include "services/base/base64.h"
#include "services/kube/config.h"
#include "services/kube/resources.h"
#include "tenancy/sync/bookkeeping.h"
#include "tenancy/sync/token_secret.h"

namespace septa::syncer {

using nlohmann::json;
using reconcile::Outcome;
namespace tsync = tenancy::sync;

namespace {

std::int64_t UnixSeconds(TimePoint t) {
  return std::chrono::duration_cast<std::chrono::seconds>(t.time_since_epoch()).count();
}

std::optional<TimePoint> FromUnixSeconds(std::int64_t seconds) { return TimePoint(std::chrono::seconds(seconds)); }

// "pod team/web of acme/dev": names only, never the token.
std::string PodText(const WatchedCluster& cluster, const std::string& ns, const std::string& name) {
  return "pod " + ns + "/" + name + " of " + cluster.ref().ToString();
}

Status About(const std::string& what, const Status& status) {
  return Status(status.code(), "the service account token of " + what + ": " + status.message());
}

// Whether `host_object` was written for the virtual pod `uid` of this virtual cluster.
bool RecordsPod(const json& host_object, const WatchedCluster& cluster, const std::string& uid) {
  auto ref = tsync::VirtualRefOf(host_object, cluster.tenant(), cluster.vcluster());
  return ref && ref->uid == uid;
}

}  // namespace

TokenSecrets::TokenSecrets(kube::Client& host, HostInformerRef host_secrets, const Clock& clock)
    : host_(host), host_secrets_(std::move(host_secrets)), clock_(clock) {}

Result<std::optional<TimePoint>> TokenSecrets::Ensure(WatchedCluster& cluster, const json& virtual_pod) {
  if (!tsync::MountsServiceAccountToken(virtual_pod)) return std::optional<TimePoint>();
  const tsync::VirtualClusterView view = cluster.synced().view;
  const std::string ns = tsync::MetadataField(virtual_pod, "namespace"),
                    name = tsync::MetadataField(virtual_pod, "name");
  const std::string uid = tsync::MetadataField(virtual_pod, "uid");
  const std::string what = PodText(cluster, ns, name);
  const std::string secret_name = tsync::TokenSecretName(uid);
  std::optional<json> current = host_secrets_().Get(view.host_namespace, secret_name);
  // Not due: looked at again when it is. Read live when the cache has none
  // yet: written a moment ago, or never.
  auto fresh = [&](const json& secret) -> std::optional<TimePoint> {
    auto after = tsync::RecordedTokenRefresh(secret);
    if (after && RecordsPod(secret, cluster, uid) && UnixSeconds(clock_.Now()) < *after) return FromUnixSeconds(*after);
    return std::nullopt;
  };
  if (current) {
    if (!RecordsPod(*current, cluster, uid)) {
      return About(what, Status(Code::kFailedPrecondition,
                                view.host_namespace + "/" + secret_name + " is not its token secret: left alone"));
    }
    if (auto next = fresh(*current)) return next;
  }

  auto minted = cluster.client().CreateSubresource(kube::kServiceAccounts, ns, tsync::ServiceAccountOf(virtual_pod),
                                                   "token", tsync::TokenRequestFor(virtual_pod, view.tier));
  if (!minted.ok()) return About(what, minted.status());
  const json status = minted->value("status", json::object());
  const std::string token = status.value("token", "");
  const auto expires = ParseRfc3339(status.value("expirationTimestamp", ""));
  if (token.empty() || !expires) {
    return About(what,
                 Status(Code::kUnavailable, "the virtual API server's TokenRequest answer has no token or expiry"));
  }
  const std::int64_t refresh_after = tsync::TokenRefreshAfter(UnixSeconds(clock_.Now()), UnixSeconds(*expires));
  json secret = {{"apiVersion", "v1"},
                 {"kind", "Secret"},
                 {"metadata", tsync::TokenSecretMetadata(view, virtual_pod, refresh_after)},
                 {"type", "Opaque"},
                 {"data",
                  {{"token", base::Base64Encode(token)},
                   {"ca.crt", base::Base64Encode(cluster.client().config().ca_pem)},
                   {"namespace", base::Base64Encode(ns)}}}};
  if (!current) {
    auto created = host_.Create(kube::kSecrets, view.host_namespace, secret);
    if (created.ok()) {
      spdlog::info("syncer: wrote the service account token of {} to {}/{}", what, view.host_namespace, secret_name);
      return FromUnixSeconds(refresh_after);
    }
    if (created.status().code() != Code::kAlreadyExists) return About(what, created.status());
    auto live = host_.Get(kube::kSecrets, view.host_namespace, secret_name);  // written by an earlier pass
    if (!live.ok()) return About(what, live.status());
    if (!RecordsPod(*live, cluster, uid)) {
      return About(what, Status(Code::kFailedPrecondition,
                                view.host_namespace + "/" + secret_name + " is not its token secret: left alone"));
    }
    if (auto next = fresh(*live)) return next;
    current = *std::move(live);
  }
  secret["metadata"]["resourceVersion"] = tsync::MetadataField(*current, "resourceVersion");
  auto updated = host_.Update(kube::kSecrets, view.host_namespace, secret);
  if (!updated.ok()) return About(what, updated.status());  // 409: read again, never overwritten blindly
  spdlog::info("syncer: refreshed the service account token of {} in {}/{}", what, view.host_namespace, secret_name);
  return FromUnixSeconds(refresh_after);
}

Outcome TokenSecrets::Reconcile(WatchedCluster& cluster, const std::string& ns, const std::string& uid,
                                const kube::Informer& host_pods) {
  const tsync::VirtualClusterView view = cluster.synced().view;
  const std::string secret_name = tsync::TokenSecretName(uid);
  const std::optional<json> secret = host_secrets_().Get(view.host_namespace, secret_name);
  if (!secret || !RecordsPod(*secret, cluster, uid)) return Outcome::Done();  // none, or not ours
  const tsync::VirtualRef ref = *tsync::VirtualRefOf(*secret, cluster.tenant(), cluster.vcluster());
  if (ref.ns != ns) return Outcome::Done();
  const std::string host_pod_name = tsync::HostObjectName(ref.name, ref.ns, view.vcluster);
  auto virtual_pod_there = [&](const json& pod) { return tsync::MetadataField(pod, "uid") == uid; };
  auto host_pod_there = [&](const json& pod) { return RecordsPod(pod, cluster, uid); };
  if (auto pod = cluster.pods().Get(ref.ns, ref.name); pod && virtual_pod_there(*pod)) return Outcome::Done();
  if (auto pod = host_pods.Get(view.host_namespace, host_pod_name); pod && host_pod_there(*pod)) return Outcome::Done();
  // The caches say both are gone; a cache may lag, so they are read live.
  auto virtual_pod = cluster.client().Get(kube::kPods, ref.ns, ref.name);
  if (virtual_pod.ok() && virtual_pod_there(*virtual_pod)) return Outcome::Done();
  if (!virtual_pod.ok() && virtual_pod.status().code() != Code::kNotFound) return Outcome::Error(virtual_pod.status());
  auto host_pod = host_.Get(kube::kPods, view.host_namespace, host_pod_name);
  if (host_pod.ok() && host_pod_there(*host_pod)) return Outcome::Done();
  if (!host_pod.ok() && host_pod.status().code() != Code::kNotFound) return Outcome::Error(host_pod.status());
  kube::DeleteOptions options;
  options.precondition_uid = tsync::MetadataField(*secret, "uid");
  Status deleted = host_.Delete(kube::kSecrets, view.host_namespace, secret_name, options);
  if (!deleted.ok() && deleted.code() != Code::kNotFound) {
    return Outcome::Error(About(PodText(cluster, ref.ns, ref.name), deleted));
  }
  spdlog::info("syncer: deleted the service account token secret {}/{} of {}", view.host_namespace, secret_name,
               PodText(cluster, ref.ns, ref.name));
  return Outcome::Done();
}

std::vector<TokenKey> TokenSecrets::TokenKeys(const std::string& host_namespace,
                                              const VirtualClusterRef& cluster) const {
  std::vector<TokenKey> keys;
  if (host_namespace.empty()) return keys;
  for (const json& secret : host_secrets_().ListNamespace(host_namespace)) {
    if (tsync::MetadataMapString(secret, "annotations", tsync::kVirtualKindAnnotation) != tsync::kTokenSecretKind) {
      continue;
    }
    if (auto ref = tsync::VirtualRefOf(secret, cluster.tenant, cluster.vcluster)) {
      keys.push_back(TokenKey{cluster, ref->ns, ref->uid});
    }
  }
  return keys;
}

}  // namespace septa::syncer
