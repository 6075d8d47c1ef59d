#include "services/reconcile/host_workloads.h"

#include <array>

#include "services/kube/resources.h"
#include "tenancy/host/manifest.h"

namespace septa::reconcile {

namespace {

using nlohmann::json;

// Controllers first, so that no ReplicaSet makes a pod again once its pods are gone.
const std::array<kube::Resource, 5> kWorkloads = {kube::kDeployments, kube::kStatefulSets, kube::kJobs,
                                                  kube::kReplicaSets, kube::kPods};

bool SeptaOwns(const json& metadata) {
  const json labels = metadata.value("labels", json::object());
  return labels.value(tenancy::host::kManagedByLabel, "") == tenancy::host::kManagedByValue;
}

}  // namespace

Result<int> DeleteHostWorkloads(kube::Client& host, const std::string& host_namespace) {
  int present = 0;
  for (const kube::Resource& resource : kWorkloads) {
    auto listed = host.ListAll(resource, host_namespace);
    if (!listed.ok()) {
      if (listed.status().code() == Code::kNotFound) continue;  // a kind the host does not serve
      return listed.status();
    }
    for (const auto& item : listed->items) {
      const json object = item.ToJson();
      const json metadata = object.value("metadata", json::object());
      if (SeptaOwns(metadata)) continue;
      ++present;
      if (metadata.contains("deletionTimestamp")) continue;
      Status deleted = host.Delete(resource, host_namespace, metadata.value("name", ""));
      if (!deleted.ok() && deleted.code() != Code::kNotFound) return deleted;
    }
  }
  return present;
}

}  // namespace septa::reconcile
