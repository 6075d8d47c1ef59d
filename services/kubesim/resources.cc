#include "services/kubesim/resources.h"

#include <algorithm>

namespace septa::kubesim {

namespace {

ResourceType Make(std::string group, std::string version, std::string resource, std::string singular, std::string kind,
                  bool namespaced, std::vector<std::string> short_names, bool has_status) {
  ResourceType t;
  t.group = std::move(group);
  t.versions = {std::move(version)};
  t.resource = std::move(resource);
  t.singular = std::move(singular);
  t.kind = std::move(kind);
  t.namespaced = namespaced;
  t.short_names = std::move(short_names);
  t.has_status = has_status;
  return t;
}

}  // namespace

bool ResourceType::serves(const std::string& version) const {
  return std::find(versions.begin(), versions.end(), version) != versions.end();
}

namespace {

// The built-in kinds, made once per process: every registry (one per
// cluster, and a process may serve thousands of virtual clusters) shares them.
std::map<std::string, std::shared_ptr<const ResourceType>> BuiltinTypes() {
  std::map<std::string, std::shared_ptr<const ResourceType>> by_key;
  const bool kNs = true, kCluster = false, kStatus = true, kNoStatus = false;
  for (ResourceType t : {
           Make("", "v1", "namespaces", "namespace", "Namespace", kCluster, {"ns"}, kStatus),
           Make("", "v1", "pods", "pod", "Pod", kNs, {"po"}, kStatus),
           Make("", "v1", "services", "service", "Service", kNs, {"svc"}, kStatus),
           Make("", "v1", "endpoints", "endpoints", "Endpoints", kNs, {"ep"}, kNoStatus),
           Make("", "v1", "configmaps", "configmap", "ConfigMap", kNs, {"cm"}, kNoStatus),
           Make("", "v1", "secrets", "secret", "Secret", kNs, {}, kNoStatus),
           Make("", "v1", "serviceaccounts", "serviceaccount", "ServiceAccount", kNs, {"sa"}, kNoStatus),
           Make("", "v1", "events", "event", "Event", kNs, {"ev"}, kNoStatus),
           Make("", "v1", "nodes", "node", "Node", kCluster, {"no"}, kStatus),
           Make("", "v1", "resourcequotas", "resourcequota", "ResourceQuota", kNs, {"quota"}, kStatus),
           Make("", "v1", "limitranges", "limitrange", "LimitRange", kNs, {"limits"}, kNoStatus),
           Make("", "v1", "persistentvolumeclaims", "persistentvolumeclaim", "PersistentVolumeClaim", kNs, {"pvc"},
                kStatus),
           Make("apps", "v1", "deployments", "deployment", "Deployment", kNs, {"deploy"}, kStatus),
           Make("apps", "v1", "statefulsets", "statefulset", "StatefulSet", kNs, {"sts"}, kStatus),
           Make("apps", "v1", "replicasets", "replicaset", "ReplicaSet", kNs, {"rs"}, kStatus),
           Make("batch", "v1", "jobs", "job", "Job", kNs, {}, kStatus),
           Make("rbac.authorization.k8s.io", "v1", "roles", "role", "Role", kNs, {}, kNoStatus),
           Make("rbac.authorization.k8s.io", "v1", "rolebindings", "rolebinding", "RoleBinding", kNs, {}, kNoStatus),
           Make("rbac.authorization.k8s.io", "v1", "clusterroles", "clusterrole", "ClusterRole", kCluster, {},
                kNoStatus),
           Make("rbac.authorization.k8s.io", "v1", "clusterrolebindings", "clusterrolebinding", "ClusterRoleBinding",
                kCluster, {}, kNoStatus),
           Make("networking.k8s.io", "v1", "networkpolicies", "networkpolicy", "NetworkPolicy", kNs, {"netpol"},
                kNoStatus),
           Make("node.k8s.io", "v1", "runtimeclasses", "runtimeclass", "RuntimeClass", kCluster, {}, kNoStatus),
           Make("scheduling.k8s.io", "v1", "priorityclasses", "priorityclass", "PriorityClass", kCluster, {"pc"},
                kNoStatus),
           Make("coordination.k8s.io", "v1", "leases", "lease", "Lease", kNs, {}, kNoStatus),
           // Create only, never stored (ApiServer::Impl::TokenReview).
           Make("authentication.k8s.io", "v1", "tokenreviews", "tokenreview", "TokenReview", kCluster, {}, kNoStatus),
           Make("apiextensions.k8s.io", "v1", "customresourcedefinitions", "customresourcedefinition",
                "CustomResourceDefinition", kCluster, {"crd", "crds"}, kStatus),
       }) {
    auto key = t.key();
    by_key[key] = std::make_shared<const ResourceType>(std::move(t));
  }
  return by_key;
}

}  // namespace

ResourceRegistry::ResourceRegistry() {
  static const auto* const builtin = new std::map<std::string, std::shared_ptr<const ResourceType>>(BuiltinTypes());
  by_key_ = *builtin;
}

std::shared_ptr<const ResourceType> ResourceRegistry::Find(const std::string& group, const std::string& version,
                                                           const std::string& resource) const {
  std::lock_guard lock(mu_);
  auto it = by_key_.find(group.empty() ? resource : resource + "." + group);
  if (it == by_key_.end() || !it->second->serves(version)) return nullptr;
  return it->second;
}

std::shared_ptr<const ResourceType> ResourceRegistry::FindByKind(const std::string& group,
                                                                 const std::string& kind) const {
  std::lock_guard lock(mu_);
  for (const auto& [key, t] : by_key_) {
    if (t->group == group && t->kind == kind) return t;
  }
  return nullptr;
}

std::vector<std::shared_ptr<const ResourceType>> ResourceRegistry::All() const {
  std::lock_guard lock(mu_);
  std::vector<std::shared_ptr<const ResourceType>> out;
  for (const auto& [key, t] : by_key_) out.push_back(t);
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
    return std::tie(a->group, a->resource) < std::tie(b->group, b->resource);
  });
  return out;
}

void ResourceRegistry::Register(ResourceType type) {
  std::lock_guard lock(mu_);
  auto key = type.key();
  by_key_[key] = std::make_shared<const ResourceType>(std::move(type));
}

void ResourceRegistry::Unregister(const std::string& group, const std::string& resource) {
  std::lock_guard lock(mu_);
  by_key_.erase(group.empty() ? resource : resource + "." + group);
}

}  // namespace septa::kubesim
