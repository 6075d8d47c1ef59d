#include "services/reconcile/host_workloads.h"

#include <array>

#include "services/kube/resources.h"
#include "tenancy/host/manifest.h"
#include "tenancy/host/names.h"
#include "tenancy/host/render.h"
#include "tenancy/sync/bookkeeping.h"

namespace septa::reconcile {

namespace {

using nlohmann::json;

// Controllers first, so that no ReplicaSet makes a pod again once its pods are gone.
const std::array<kube::Resource, 5> kWorkloads = {kube::kDeployments, kube::kStatefulSets, kube::kJobs,
                                                  kube::kReplicaSets, kube::kPods};

// Septa's own: labelled managed-by=septa and not a copy the syncer made of
// a tenant's object (whose labels came from the tenant).
bool SeptaOwns(const json& metadata) {
  const json labels = metadata.value("labels", json::object());
  return labels.value(tenancy::host::kManagedByLabel, "") == tenancy::host::kManagedByValue &&
         !labels.contains(tenancy::sync::kSyncedLabel);
}

}  // namespace

Result<int> DeleteHostWorkloads(kube::Client& host, const std::string& host_namespace) {
  int present = 0;
  for (const kube::Resource& resource : kWorkloads) {
    auto listed = host.ListAll(resource, host_namespace);
    if (!listed.ok()) {
      if (IsNotFound(listed)) continue;  // a kind the host does not serve
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

Result<bool> NewPodsRefused(kube::Client& host, const std::string& host_namespace) {
  auto quota = host.Get(kube::kResourceQuotas, host_namespace, std::string(tenancy::host::kResourceQuotaName));
  if (!quota.ok()) return IsNotFound(quota) ? Result<bool>(false) : Result<bool>(quota.status());
  const json status = quota->value("status", json::object());
  const json hard = status.is_object() ? status.value("hard", json::object()) : json::object();
  return hard.is_object() && hard.value("pods", json()) == tenancy::host::kSleepingPods;
}

}  // namespace septa::reconcile
