#include "services/syncer/syncer_keys.h"

#include "services/kube/resources.h"

namespace septa::syncer {

namespace {

constexpr std::string_view kEventsPart = "events";
constexpr std::string_view kTokensPart = "tokens";
constexpr std::string_view kNodesPart = "nodes";
constexpr std::string_view kPodGroupsPart = "podgroups";

std::vector<std::string_view> SyncerKeyParts(std::string_view text) {
  std::vector<std::string_view> parts;
  std::size_t begin = 0;
  while (true) {
    const std::size_t slash = text.find('/', begin);
    parts.push_back(text.substr(begin, slash == std::string_view::npos ? std::string_view::npos : slash - begin));
    if (slash == std::string_view::npos) return parts;
    begin = slash + 1;
  }
}

std::string JoinSyncerKey(const VirtualClusterRef& cluster, std::initializer_list<std::string_view> rest) {
  std::string text = cluster.ToString();
  for (std::string_view part : rest) text.append("/").append(part);
  return text;
}

}  // namespace

const VirtualClusterRef& ClusterOf(const SyncerKey& key) {
  return std::visit([](const auto& k) -> const VirtualClusterRef& { return k.cluster; }, key);
}

std::string SyncerShardKey(const SyncerKey& key) { return reconcile::EncodeKey(ClusterOf(key)); }

std::string EncodeSyncerKey(const SyncerKey& key) {
  struct {
    std::string operator()(const ClusterKey& k) const { return k.cluster.ToString(); }
    std::string operator()(const PodKey& k) const { return JoinSyncerKey(k.cluster, {k.ns, k.name}); }
    std::string operator()(const ObjectKey& k) const {
      return JoinSyncerKey(k.cluster, {ResourceOf(k.kind).resource, k.ns, k.name});
    }
    std::string operator()(const EventKey& k) const {
      return JoinSyncerKey(k.cluster, {kEventsPart, k.host_namespace, k.name});
    }
    std::string operator()(const TokenKey& k) const { return JoinSyncerKey(k.cluster, {kTokensPart, k.ns, k.uid}); }
    std::string operator()(const NodesKey& k) const { return JoinSyncerKey(k.cluster, {kNodesPart}); }
    std::string operator()(const PodGroupsKey& k) const { return JoinSyncerKey(k.cluster, {kPodGroupsPart}); }
  } encode;
  return std::visit(encode, key);
}

std::optional<SyncerKey> DecodeSyncerKey(std::string_view text) {
  const std::vector<std::string_view> parts = SyncerKeyParts(text);
  for (std::string_view part : parts) {
    if (part.empty()) return std::nullopt;
  }
  if (parts.size() < 2) return std::nullopt;
  VirtualClusterRef cluster{std::string(parts[0]), std::string(parts[1])};
  auto at = [&](std::size_t i) { return std::string(parts[i]); };
  switch (parts.size()) {
    case 2: return ClusterKey{std::move(cluster)};
    case 3:
      if (parts[2] == kNodesPart) return NodesKey{std::move(cluster)};
      if (parts[2] == kPodGroupsPart) return PodGroupsKey{std::move(cluster)};
      return std::nullopt;
    case 4: return PodKey{std::move(cluster), at(2), at(3)};
    case 5:
      if (parts[2] == kEventsPart) return EventKey{std::move(cluster), at(3), at(4)};
      if (parts[2] == kTokensPart) return TokenKey{std::move(cluster), at(3), at(4)};
      for (ObjectKind kind : {ObjectKind::kConfigMap, ObjectKind::kSecret, ObjectKind::kService, ObjectKind::kEndpoints,
                              ObjectKind::kClaim}) {
        if (ResourceOf(kind).resource == parts[2]) return ObjectKey{std::move(cluster), kind, at(3), at(4)};
      }
      return std::nullopt;
    default: return std::nullopt;
  }
}

const kube::Resource& ResourceOf(ObjectKind kind) {
  switch (kind) {
    case ObjectKind::kConfigMap: return kube::kConfigMaps;
    case ObjectKind::kSecret: return kube::kSecrets;
    case ObjectKind::kService: return kube::kServices;
    case ObjectKind::kEndpoints: return kube::kEndpoints;
    case ObjectKind::kClaim: return kube::kPersistentVolumeClaims;
  }
  return kube::kConfigMaps;  // unreachable: every kind is above
}

std::optional<ObjectKind> ObjectKindOf(const kube::Resource& resource) {
  for (ObjectKind kind : {ObjectKind::kConfigMap, ObjectKind::kSecret, ObjectKind::kService, ObjectKind::kEndpoints,
                          ObjectKind::kClaim}) {
    const kube::Resource& known = ResourceOf(kind);
    if (known.group == resource.group && known.resource == resource.resource) return kind;
  }
  return std::nullopt;
}

ObjectKind ObjectKindOf(tenancy::sync::CopiedKind kind) {
  return kind == tenancy::sync::CopiedKind::kConfigMap ? ObjectKind::kConfigMap : ObjectKind::kSecret;
}

const kube::Resource& ResourceOf(tenancy::sync::CopiedKind kind) { return ResourceOf(ObjectKindOf(kind)); }

std::optional<ObjectKey> ObjectKeyOf(const VirtualClusterRef& cluster, const kube::Resource& resource, std::string ns,
                                     std::string name) {
  const std::optional<ObjectKind> kind = ObjectKindOf(resource);
  if (!kind) return std::nullopt;
  return ObjectKey{cluster, *kind, std::move(ns), std::move(name)};
}

std::vector<ObjectKey> ReferencedObjectKeys(const VirtualClusterRef& cluster, const nlohmann::json& virtual_pod) {
  std::vector<ObjectKey> keys;
  for (const tenancy::sync::ObjectRef& ref : tenancy::sync::ReferencedObjects(virtual_pod)) {
    keys.push_back(ObjectKey{cluster, ObjectKindOf(ref.kind), ref.ns, ref.name});
  }
  return keys;
}

}  // namespace septa::syncer
