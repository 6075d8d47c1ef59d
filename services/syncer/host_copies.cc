#include "services/syncer/host_copies.h"

#include <spdlog/spdlog.h>

#include "services/syncer/virtual_cluster_watches.h"
#include "tenancy/sync/bookkeeping.h"

namespace septa::syncer {

Status DeleteHostCopy(kube::Client& host, const kube::Resource& resource, const nlohmann::json& host_copy) {
  namespace tsync = tenancy::sync;
  kube::DeleteOptions options;
  options.precondition_uid = tsync::MetadataField(host_copy, "uid");
  const std::string ns = tsync::MetadataField(host_copy, "namespace"), name = tsync::MetadataField(host_copy, "name");
  Status deleted = host.Delete(resource, ns, name, options);
  if (!deleted.ok() && deleted.code() != Code::kNotFound) return deleted;
  spdlog::info("syncer: deleted the host copy {} {}/{}", resource.resource, ns, name);
  return Status::Ok();
}

std::optional<std::string> KeyOfHostCopy(const nlohmann::json& host_copy, const kube::Resource& resource) {
  namespace tsync = tenancy::sync;
  const std::string tenant = tsync::MetadataMapString(host_copy, "labels", tsync::kTenantLabel);
  const std::string vcluster = tsync::MetadataMapString(host_copy, "labels", tsync::kVclusterLabel);
  auto ref = tsync::VirtualRefOf(host_copy, tenant, vcluster);
  if (!ref) return std::nullopt;
  return ObjectKey(tenant, vcluster, resource, ref->ns, ref->name);
}

void AddHostCopyKeys(std::set<std::string>& keys, const kube::Informer& copies, const std::string& host_namespace,
                     const std::string& tenant, const std::string& vcluster, const kube::Resource& resource) {
  if (host_namespace.empty()) return;
  for (const nlohmann::json& copy : copies.ListNamespace(host_namespace)) {
    if (auto ref = tenancy::sync::VirtualRefOf(copy, tenant, vcluster)) {
      keys.insert(ObjectKey(tenant, vcluster, resource, ref->ns, ref->name));
    }
  }
}

}  // namespace septa::syncer
