#include "services/syncer/pod_groups.h"

#include <spdlog/spdlog.h>

#include "services/kube/resources.h"
#include "tenancy/sync/bookkeeping.h"

namespace septa::syncer {

using nlohmann::json;
namespace tsync = tenancy::sync;

Status PodGroups::Ensure(const tsync::VirtualClusterView& view, const std::string& ns, const tsync::Gang& gang) {
  json want = tsync::HostPodGroup(view, ns, gang);
  const std::string name = tsync::MetadataField(want, "name");
  auto current = host_.Get(kube::kKaiPodGroups, view.host_namespace, name);
  if (!current.ok() && current.status().code() != Code::kNotFound) return current.status();
  if (!current.ok()) {
    auto created = host_.Create(kube::kKaiPodGroups, view.host_namespace, want);
    if (created.ok()) {
      spdlog::info("syncer: PodGroup {}/{} for gang {} of {}/{} ({} pods)", view.host_namespace, name, gang.name,
                   view.tenant, view.vcluster, gang.size);
    }
    // AlreadyExists: another member's pass made it; its spec is checked at that member's next pass.
    return created.ok() || created.status().code() == Code::kAlreadyExists ? Status::Ok() : created.status();
  }
  if (tsync::PodGroupUpToDate(want, *current)) return Status::Ok();
  // A member asked for another size: the gang is what its latest member says.
  json updated = *current;
  updated["spec"]["minMember"] = want["spec"]["minMember"];
  updated["spec"]["queue"] = want["spec"]["queue"];
  auto written = host_.Update(kube::kKaiPodGroups, view.host_namespace, updated);  // 409: read again
  return written.ok() ? Status::Ok() : written.status();
}

Status PodGroups::Collect(const tsync::VirtualClusterView& view, const std::set<std::string>& in_use) {
  kube::ListOptions options;
  options.label_selector = std::string(tsync::kSyncedLabel) + "=true," + std::string(tsync::kTenantLabel) + "=" +
                           view.tenant + "," + std::string(tsync::kVclusterLabel) + "=" + view.vcluster;
  auto groups = host_.ListAll(kube::kKaiPodGroups, view.host_namespace, options);
  if (!groups.ok()) return groups.status();
  for (const auto& item : groups->items) {
    const json group = item.ToJson();
    const std::string name = tsync::MetadataField(group, "name");
    if (in_use.contains(name)) continue;
    kube::DeleteOptions precondition;
    precondition.precondition_uid = tsync::MetadataField(group, "uid");
    Status deleted = host_.Delete(kube::kKaiPodGroups, view.host_namespace, name, precondition);
    if (!deleted.ok() && deleted.code() != Code::kNotFound) return deleted;
    spdlog::info("syncer: deleted PodGroup {}/{}: no pod of {}/{} is in the gang", view.host_namespace, name,
                 view.tenant, view.vcluster);
  }
  return Status::Ok();
}

}  // namespace septa::syncer
