// The syncer's controller keys: one small struct per kind of work, all of
// one virtual cluster, in one std::variant that the reconcile runtime
// queues as is (reconcile/key.h) and SyncerController::Reconcile routes
// with std::visit. Their text, for logs and for anything that names a key
// from outside (tests), is one codec here:
//
//   ClusterKey    "<tenant>/<vcluster>"                       start, refresh or stop its watch; sweep its keys
//   PodKey        "<tenant>/<vcluster>/<namespace>/<name>"    one virtual pod
//   ObjectKey     "<tenant>/<vcluster>/<resource>/<namespace>/<name>", resource one of
//                 configmaps, secrets (ObjectCopier), services, endpoints (ServiceSyncer),
//                 persistentvolumeclaims (ClaimSyncer)
//   EventKey      "<tenant>/<vcluster>/events/<host namespace>/<name>"   one host event (EventCopier)
//   TokenKey      "<tenant>/<vcluster>/tokens/<namespace>/<pod UID>"     one pod's token secret (TokenSecrets)
//   NodesKey      "<tenant>/<vcluster>/nodes"                 the nodes it shows (SyncVirtualNodes)
//   PodGroupsKey  "<tenant>/<vcluster>/podgroups"             its gangs' PodGroups (CollectPodGroups)
//
// Every key shards on its virtual cluster's "<tenant>/<vcluster>", so it
// follows the provisioner's shard of it. Kubernetes names hold no '/', so
// the text is unambiguous; Decode refuses any other shape, an unknown
// resource and an empty part.
#pragma once

#include <compare>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "services/kube/client.h"
#include "services/reconcile/key.h"
#include "tenancy/sync/pod_references.h"
#include "tenancy/virtual_cluster_ref.h"

namespace septa::syncer {

using tenancy::VirtualClusterRef;

struct ClusterKey {
  VirtualClusterRef cluster;
  friend bool operator==(const ClusterKey&, const ClusterKey&) = default;
  friend auto operator<=>(const ClusterKey&, const ClusterKey&) = default;
};

struct PodKey {
  VirtualClusterRef cluster;
  std::string ns, name;
  friend bool operator==(const PodKey&, const PodKey&) = default;
  friend auto operator<=>(const PodKey&, const PodKey&) = default;
};

// The virtual kinds the syncer copies besides pods.
enum class ObjectKind { kConfigMap, kSecret, kService, kEndpoints, kClaim };

struct ObjectKey {
  VirtualClusterRef cluster;
  ObjectKind kind;
  std::string ns, name;
  friend bool operator==(const ObjectKey&, const ObjectKey&) = default;
  friend auto operator<=>(const ObjectKey&, const ObjectKey&) = default;
};

struct EventKey {
  VirtualClusterRef cluster;
  std::string host_namespace, name;
  friend bool operator==(const EventKey&, const EventKey&) = default;
  friend auto operator<=>(const EventKey&, const EventKey&) = default;
};

struct TokenKey {
  VirtualClusterRef cluster;
  std::string ns, uid;  // of the virtual pod
  friend bool operator==(const TokenKey&, const TokenKey&) = default;
  friend auto operator<=>(const TokenKey&, const TokenKey&) = default;
};

struct NodesKey {
  VirtualClusterRef cluster;
  friend bool operator==(const NodesKey&, const NodesKey&) = default;
  friend auto operator<=>(const NodesKey&, const NodesKey&) = default;
};

struct PodGroupsKey {
  VirtualClusterRef cluster;
  friend bool operator==(const PodGroupsKey&, const PodGroupsKey&) = default;
  friend auto operator<=>(const PodGroupsKey&, const PodGroupsKey&) = default;
};

using SyncerKey = std::variant<ClusterKey, PodKey, ObjectKey, EventKey, TokenKey, NodesKey, PodGroupsKey>;

// The virtual cluster a key is of.
const VirtualClusterRef& ClusterOf(const SyncerKey& key);
// What a key shards on (reconcile::ControllerOptions::shard_key): its
// virtual cluster's "<tenant>/<vcluster>", the provisioner's key of it, so
// that it follows the provisioner's shard of that virtual cluster.
std::string SyncerShardKey(const SyncerKey& key);

std::string EncodeSyncerKey(const SyncerKey& key);
std::optional<SyncerKey> DecodeSyncerKey(std::string_view text);

// The API resource of a kind (kube::kConfigMaps, ...), and the kind of one;
// nullopt for a resource the syncer does not copy.
const kube::Resource& ResourceOf(ObjectKind kind);
std::optional<ObjectKind> ObjectKindOf(const kube::Resource& resource);
ObjectKind ObjectKindOf(tenancy::sync::CopiedKind kind);
// The resource of a copied kind (kube::kConfigMaps, kube::kSecrets).
const kube::Resource& ResourceOf(tenancy::sync::CopiedKind kind);

// The key of one virtual object of `resource`; nullopt for a resource the syncer does not copy.
std::optional<ObjectKey> ObjectKeyOf(const VirtualClusterRef& cluster, const kube::Resource& resource, std::string ns,
                                     std::string name);
// The keys of the config maps and secrets a virtual pod uses (tenancy::sync::ReferencedObjects).
std::vector<ObjectKey> ReferencedObjectKeys(const VirtualClusterRef& cluster, const nlohmann::json& virtual_pod);

// Called with the keys a part of the syncer asks to be looked at.
using EnqueueKey = std::function<void(const SyncerKey& key)>;

}  // namespace septa::syncer

namespace septa::reconcile {

template <>
struct KeyCodec<syncer::SyncerKey> {
  static std::string Encode(const syncer::SyncerKey& key) { return syncer::EncodeSyncerKey(key); }
  static std::optional<syncer::SyncerKey> Decode(std::string_view text) { return syncer::DecodeSyncerKey(text); }
};

}  // namespace septa::reconcile
