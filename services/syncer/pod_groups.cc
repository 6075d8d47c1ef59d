#include "services/syncer/pod_groups.h"

#include <spdlog/spdlog.h>

#include "services/kube/resources.h"
#include "tenancy/sync/bookkeeping.h"

namespace septa::syncer {

using nlohmann::json;
namespace tsync = tenancy::sync;

Result<std::optional<tsync::Refusal>> PodGroups::Ensure(const tsync::VirtualClusterView& view, const std::string& ns,
                                                        const tsync::Gang& gang) {
  using Refused = std::optional<tsync::Refusal>;
  json want = tsync::HostPodGroup(view, ns, gang);
  const std::string name = tsync::MetadataField(want, "name");
  auto current = host_.Get(kube::kKaiPodGroups, view.host_namespace, name);
  if (!current.ok() && current.status().code() != Code::kNotFound) return current.status();
  if (current.ok()) {
    const std::string recorded = tsync::MetadataMapString(*current, "labels", tsync::kVirtualNamespaceLabel);
    if (recorded != ns) return Refused(tsync::GangNameTaken(ns, gang, name, recorded));
  }
  if (!current.ok()) {
    auto created = host_.Create(kube::kKaiPodGroups, view.host_namespace, want);
    if (created.ok()) {
      spdlog::info("syncer: PodGroup {}/{} for gang {} of {}/{} ({} pods)", view.host_namespace, name, gang.name,
                   view.tenant, view.vcluster, gang.size);
    }
    // AlreadyExists: another member's pass made it; its spec is checked at that member's next pass.
    if (created.ok() || IsAlreadyExists(created)) return Refused();
    return created.status();
  }
  if (tsync::PodGroupUpToDate(want, *current)) return Refused();
  // A member asked for another size: the gang is what its latest member says.
  json updated = *current;
  updated["spec"]["minMember"] = want["spec"]["minMember"];
  updated["spec"]["queue"] = want["spec"]["queue"];
  auto written = host_.Update(kube::kKaiPodGroups, view.host_namespace, updated);  // 409: read again
  if (!written.ok()) return written.status();
  return Refused();
}

Result<int> PodGroups::Collect(const tsync::VirtualClusterView& view, const std::set<std::string>& in_use) {
  kube::ListOptions options;
  options.label_selector = std::string(tsync::kSyncedLabel) + "=true," + std::string(tsync::kTenantLabel) + "=" +
                           view.tenant + "," + std::string(tsync::kVclusterLabel) + "=" + view.vcluster;
  auto groups = host_.ListAll(kube::kKaiPodGroups, view.host_namespace, options);
  if (!groups.ok()) return groups.status();
  int collected = 0;
  for (const auto& item : groups->items) {
    const json group = item.ToJson();
    const std::string name = tsync::MetadataField(group, "name");
    if (in_use.contains(name)) continue;
    kube::DeleteOptions precondition;
    precondition.precondition_uid = tsync::MetadataField(group, "uid");
    Status deleted = host_.Delete(kube::kKaiPodGroups, view.host_namespace, name, precondition);
    if (!deleted.ok() && deleted.code() != Code::kNotFound) return deleted;
    ++collected;
    spdlog::info("syncer: deleted PodGroup {}/{}: no pod of {}/{} is in the gang", view.host_namespace, name,
                 view.tenant, view.vcluster);
  }
  return collected;
}

}  // namespace septa::syncer
