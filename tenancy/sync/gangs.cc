#include "tenancy/sync/gangs.h"

#include <charconv>

#include "common/text.h"
#include "tenancy/sync/bookkeeping.h"

namespace septa::tenancy::sync {
namespace {

using nlohmann::json;

constexpr const char* kKaiGroupAnnotation = "pod-group-name";
constexpr const char* kKaiSkipGrouperAnnotation = "kai.scheduler/skip-podgrouper";
constexpr const char* kKueueGroupLabel = "kueue.x-k8s.io/pod-group-name";
constexpr const char* kKueueGroupCountAnnotation = "kueue.x-k8s.io/pod-group-total-count";

std::string AnnotationOf(const json& pod, std::string_view key) { return MetadataMapString(pod, "annotations", key); }

std::string FieldOf(std::string_view key) { return "metadata.annotations[" + std::string(key) + "]"; }

}  // namespace

std::variant<std::monostate, Gang, Refusal> GangOf(const SyncSettings& settings, const json& virtual_pod) {
  const std::string name = AnnotationOf(virtual_pod, kGangAnnotation);
  const std::string size_text = AnnotationOf(virtual_pod, kGangSizeAnnotation);
  if (name.empty() && size_text.empty()) return std::monostate{};
  if (name.empty()) return Refusal{FieldOf(kGangAnnotation), "a gang size needs the gang's name"};
  // The host name appends "-x-<namespace>-x-<vcluster>": kept short, as a virtual cluster's name is.
  if (!IsDns1123Label(name, 40)) {
    return Refusal{FieldOf(kGangAnnotation), "\"" + name + "\" is not a gang name (a DNS-1123 label, 1-40 characters)"};
  }
  int size = 0;
  const auto [end, error] = std::from_chars(size_text.data(), size_text.data() + size_text.size(), size);
  if (size_text.empty() || error != std::errc() || end != size_text.data() + size_text.size() || size < 1 ||
      size > kMaxGangSize) {
    return Refusal{
        FieldOf(kGangSizeAnnotation),
        "\"" + size_text + "\" is not a gang size (a whole number of pods, 1 to " + std::to_string(kMaxGangSize) + ")"};
  }
  if (settings.bind_node_name || settings.scheduler == host::Scheduler::kDefault) {
    return Refusal{FieldOf(kGangAnnotation),
                   "gangs need the host's KAI or Kueue scheduler; this platform schedules pods one by one"};
  }
  return Gang{name, size};
}

std::string HostGangName(std::string_view name, std::string_view ns, std::string_view vcluster) {
  return HostObjectName(name, ns, vcluster);
}

void PatchGang(json& host_pod, const SyncSettings& settings, const VirtualClusterView& vcluster, const std::string& ns,
               const Gang& gang) {
  const std::string group = HostGangName(gang.name, ns, vcluster.vcluster);
  json& md = host_pod["metadata"];
  switch (settings.scheduler) {
    case host::Scheduler::kKai:
      md["annotations"][kKaiGroupAnnotation] = group;
      md["annotations"][kKaiSkipGrouperAnnotation] = "true";
      break;
    case host::Scheduler::kKueue:
      md["labels"][kKueueGroupLabel] = group;
      md["annotations"][kKueueGroupCountAnnotation] = std::to_string(gang.size);
      break;
    case host::Scheduler::kDefault: break;  // refused by GangOf
  }
}

std::string HostGangOf(const json& host_pod) { return AnnotationOf(host_pod, kKaiGroupAnnotation); }

json HostPodGroup(const VirtualClusterView& vcluster, const std::string& ns, const Gang& gang) {
  return {{"apiVersion", "scheduling.run.ai/v2alpha2"},
          {"kind", "PodGroup"},
          {"metadata",
           {{"name", HostGangName(gang.name, ns, vcluster.vcluster)},
            {"namespace", vcluster.host_namespace},
            {"labels",
             {{std::string(kSyncedLabel), "true"},
              {std::string(kTenantLabel), vcluster.tenant},
              {std::string(kVclusterLabel), vcluster.vcluster},
              {std::string(kVirtualNamespaceLabel), ns}}},
            {"annotations", {{std::string(kVirtualNameAnnotation), gang.name}}}}},
          // The provisioner names the virtual cluster's leaf queue after its host namespace.
          {"spec", {{"minMember", gang.size}, {"queue", vcluster.host_namespace}}}};
}

std::string OtherGangNamespace(const json& host_pod, std::string_view group, std::string_view ns) {
  const bool in_group = AnnotationOf(host_pod, kKaiGroupAnnotation) == group ||
                        MetadataMapString(host_pod, "labels", kKueueGroupLabel) == group;
  const std::string recorded = MetadataMapString(host_pod, "labels", kVirtualNamespaceLabel);
  return in_group && recorded != ns ? recorded : "";
}

Refusal GangNameTaken(std::string_view ns, const Gang& gang, std::string_view group, std::string_view other_ns) {
  return {FieldOf(kGangAnnotation), "its host name " + std::string(group) + " is a gang's of namespace \"" +
                                        std::string(other_ns) + "\" too (\"" + gang.name + "\" in \"" +
                                        std::string(ns) +
                                        "\" and a gang there map to one host name, and would be scheduled as one): "
                                        "rename one of them"};
}

bool PodGroupUpToDate(const json& want, const json& host_group) {
  const json want_spec = want.value("spec", json::object()), host_spec = host_group.value("spec", json::object());
  return host_spec.is_object() && host_spec.value("minMember", 0) == want_spec.value("minMember", 0) &&
         host_spec.value("queue", "") == want_spec.value("queue", "");
}

}  // namespace septa::tenancy::sync
