// First cut: names, bookkeeping and the runtime class; GPU pods are refused
// until the tier patches land (issue 11, in progress).
#include "tenancy/sync/pod_translation.h"

#include "tenancy/sync/bookkeeping.h"

namespace septa::tenancy::sync {
namespace {

bool AsksForGpu(const nlohmann::json& pod) {
  for (const char* list : {"containers", "initContainers"}) {
    const auto& containers = pod["spec"].value(list, nlohmann::json::array());
    for (const auto& container : containers) {
      const auto resources = container.value("resources", nlohmann::json::object());
      for (const char* kind : {"limits", "requests"}) {
        for (const auto& [name, value] : resources.value(kind, nlohmann::json::object()).items()) {
          if (name.rfind("nvidia.com/", 0) == 0) return true;
        }
      }
    }
  }
  return false;
}

}  // namespace

std::variant<HostPod, Refusal> TranslatePodDown(const SyncSettings&, const VirtualClusterView& vcluster,
                                                const nlohmann::json& virtual_pod, const std::vector<PodAssignment>&) {
  if (AsksForGpu(virtual_pod)) return Refusal{"spec.containers", "GPU pods are not synced yet"};
  const auto& meta = virtual_pod.at("metadata");
  const std::string name = meta.value("name", "");
  const std::string ns = meta.value("namespace", "");
  const std::string host_name = HostObjectName(name, ns, vcluster.vcluster);
  nlohmann::json pod = {
      {"apiVersion", "v1"}, {"kind", "Pod"}, {"spec", virtual_pod.value("spec", nlohmann::json::object())}};
  pod["metadata"] = {{"name", host_name},
                     {"namespace", vcluster.host_namespace},
                     {"labels",
                      {{std::string(kSyncedLabel), "true"},
                       {std::string(kTenantLabel), vcluster.tenant},
                       {std::string(kVclusterLabel), vcluster.vcluster},
                       {std::string(kVirtualNamespaceLabel), ns}}},
                     {"annotations",
                      {{std::string(kVirtualNameAnnotation), name},
                       {std::string(kVirtualNamespaceAnnotation), ns},
                       {std::string(kVirtualUidAnnotation), meta.value("uid", "")},
                       {std::string(kVirtualKindAnnotation), "Pod"},
                       {std::string(kHostNameAnnotation), host_name},
                       {std::string(kHostNamespaceAnnotation), vcluster.host_namespace}}}};
  auto& spec = pod["spec"];
  spec.erase("nodeName");
  spec["serviceAccountName"] = "septa-workload";
  spec["automountServiceAccountToken"] = false;
  spec["enableServiceLinks"] = false;
  if (!vcluster.tier.runtime_class.empty()) spec["runtimeClassName"] = vcluster.tier.runtime_class;
  return HostPod{std::move(pod), {}};
}

std::optional<PodAssignment> AssignmentOf(const nlohmann::json&) { return std::nullopt; }

nlohmann::json StatusUp(const nlohmann::json& virtual_pod, const nlohmann::json& host_pod) {
  nlohmann::json status = host_pod.value("status", nlohmann::json::object());
  const auto virtual_status = virtual_pod.value("status", nlohmann::json::object());
  if (virtual_status.contains("qosClass")) status["qosClass"] = virtual_status["qosClass"];
  return status;
}

std::optional<nlohmann::json> HostPodPatch(const nlohmann::json&, const nlohmann::json&) { return std::nullopt; }

}  // namespace septa::tenancy::sync
