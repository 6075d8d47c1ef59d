#include "services/reconcile/host_kinds.h"

#include <algorithm>

#include "services/kube/resources.h"
#include "tenancy/host/manifest.h"

namespace septa::reconcile {

namespace {

using tenancy::host::Scheduler;

const std::vector<HostKind> kCommon = {
    {"Namespace", kube::kNamespaces},
    {"ResourceQuota", kube::kResourceQuotas},
    {"LimitRange", kube::kLimitRanges},
    {"NetworkPolicy", {"networking.k8s.io", "v1", "networkpolicies", true}},
    {"ServiceAccount", kube::kServiceAccounts},
    {"Role", {"rbac.authorization.k8s.io", "v1", "roles", true}},
    {"RoleBinding", {"rbac.authorization.k8s.io", "v1", "rolebindings", true}},
};
const std::vector<HostKind> kKai = {{"Queue", kube::kKaiQueues}};
const std::vector<HostKind> kKueue = {
    {"ResourceFlavor", kube::kResourceFlavors},
    {"WorkloadPriorityClass", {"kueue.x-k8s.io", "v1beta2", "workloadpriorityclasses", false}},
    {"ClusterQueue", kube::kClusterQueues},
    {"LocalQueue", kube::kLocalQueues},
};

std::vector<HostKind> Join(const std::vector<HostKind>& a, const std::vector<HostKind>& b) {
  std::vector<HostKind> out = a;
  out.insert(out.end(), b.begin(), b.end());
  return out;
}

// True when every field `owned` (a FieldsV1 tree: "f:<name>" per field) names
// is still set in `desired`. Below a field `desired` sets to anything but an
// object (a list, a value) Covers has compared it whole already.
bool StillSets(const nlohmann::json& owned, const nlohmann::json& desired) {
  if (!owned.is_object() || !desired.is_object()) return true;
  for (const auto& [token, child] : owned.items()) {
    if (!token.starts_with("f:")) continue;
    auto it = desired.find(token.substr(2));
    if (it == desired.end() || !StillSets(child, *it)) return false;
  }
  return true;
}

}  // namespace

const std::vector<HostKind>& ManagedHostKinds(Scheduler scheduler) {
  static const std::vector<HostKind> kai = Join(kCommon, kKai);
  static const std::vector<HostKind> kueue = Join(kCommon, kKueue);
  switch (scheduler) {
    case Scheduler::kKai: return kai;
    case Scheduler::kKueue: return kueue;
    case Scheduler::kDefault: break;
  }
  return kCommon;
}

std::optional<kube::Resource> ResourceOfKind(const std::string& api_version, const std::string& kind) {
  for (const auto* list : {&kCommon, &kKai, &kKueue}) {
    auto it = std::ranges::find_if(
        *list, [&](const HostKind& k) { return k.kind == kind && k.resource.ApiVersion() == api_version; });
    if (it != list->end()) return it->resource;
  }
  return std::nullopt;
}

std::optional<tenancy::VirtualClusterRef> VClusterKeyOf(const nlohmann::json& object) {
  const nlohmann::json* labels = nullptr;
  if (auto md = object.find("metadata"); md != object.end() && md->is_object()) {
    if (auto l = md->find("labels"); l != md->end() && l->is_object()) labels = &*l;
  }
  if (!labels) return std::nullopt;
  auto text = [&](const char* key) {
    auto it = labels->find(key);
    return it != labels->end() && it->is_string() ? it->get<std::string>() : std::string();
  };
  if (text(tenancy::host::kManagedByLabel) != tenancy::host::kManagedByValue) return std::nullopt;
  tenancy::VirtualClusterRef ref{text(tenancy::host::kTenantLabel), text(tenancy::host::kVClusterLabel)};
  if (ref.tenant.empty() || ref.vcluster.empty()) return std::nullopt;
  return ref;
}

std::string VClusterSelector(const std::string& tenant, const std::string& vcluster) {
  return std::string(tenancy::host::kManagedByLabel) + "=" + tenancy::host::kManagedByValue + "," +
         tenancy::host::kTenantLabel + "=" + tenant + "," + tenancy::host::kVClusterLabel + "=" + vcluster;
}

bool Covers(const nlohmann::json& live, const nlohmann::json& desired) {
  // Lists element by element: an API server defaults fields inside them
  // (a container's terminationMessagePath, a volume's defaultMode).
  if (desired.is_array()) {
    if (!live.is_array() || live.size() != desired.size()) return false;
    for (std::size_t i = 0; i < desired.size(); ++i) {
      if (!Covers(live[i], desired[i])) return false;
    }
    return true;
  }
  if (!desired.is_object()) return live == desired;
  if (!live.is_object()) return false;
  for (const auto& [key, value] : desired.items()) {
    auto it = live.find(key);
    if (it == live.end() || !Covers(*it, value)) return false;
  }
  return true;
}

bool UpToDate(const nlohmann::json& live, const nlohmann::json& desired, const std::string& field_manager) {
  if (!Covers(live, desired)) return false;
  const nlohmann::json* managed = nullptr;
  if (auto md = live.find("metadata"); md != live.end() && md->is_object()) {
    if (auto m = md->find("managedFields"); m != md->end() && m->is_array()) managed = &*m;
  }
  if (!managed) return true;
  for (const auto& entry : *managed) {
    if (!entry.is_object() || entry.value("manager", "") != field_manager || entry.value("operation", "") != "Apply") {
      continue;
    }
    if (auto fields = entry.find("fieldsV1"); fields != entry.end() && !StillSets(*fields, desired)) return false;
  }
  return true;
}

namespace {

nlohmann::json WithoutStatus(nlohmann::json object) {
  if (!object.is_object()) return object;
  object.erase("status");
  if (auto md = object.find("metadata"); md != object.end() && md->is_object()) {
    md->erase("resourceVersion");
    md->erase("managedFields");
  }
  return object;
}

}  // namespace

bool ChangedBeyondStatus(const nlohmann::json& before, const nlohmann::json& after) {
  return WithoutStatus(before) != WithoutStatus(after);
}

}  // namespace septa::reconcile
