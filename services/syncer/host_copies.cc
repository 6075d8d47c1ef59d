#include "services/syncer/host_copies.h"

#include <spdlog/spdlog.h>

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

}  // namespace septa::syncer
