#include "tenancy/sync/pod_policy.h"

#include <algorithm>
#include <array>
#include <set>
#include <string>

#include "tenancy/sync/bookkeeping.h"
#include "tenancy/sync/gangs.h"
#include "tenancy/sync/host_keys.h"
#include "tenancy/sync/pod_references.h"

namespace septa::tenancy::sync {
namespace {

using nlohmann::json;

// Pod Security Standards, baseline "Capabilities": what may be added.
constexpr std::array<std::string_view, 13> kBaselineCapabilities = {
    "AUDIT_WRITE",      "CHOWN",   "DAC_OVERRIDE", "FOWNER",  "FSETID", "KILL",      "MKNOD",
    "NET_BIND_SERVICE", "SETFCAP", "SETGID",       "SETPCAP", "SETUID", "SYS_CHROOT"};

bool True(const json& object, const char* key) {
  auto it = object.find(key);
  return it != object.end() && it->is_boolean() && it->get<bool>();
}

std::string Path(std::string_view list, std::size_t index) {
  return "spec." + std::string(list) + "[" + std::to_string(index) + "]";
}

const json& SecurityContext(const json& object) {
  static const json kEmpty = json::object();
  auto it = object.find("securityContext");
  return it != object.end() && it->is_object() ? *it : kEmpty;
}

// Pod Security Standards, baseline "Sysctls": the safe set.
constexpr std::array<std::string_view, 10> kSafeSysctls = {
    "kernel.shm_rmid_forced",       "net.ipv4.ip_local_port_range", "net.ipv4.ip_unprivileged_port_start",
    "net.ipv4.tcp_syncookies",      "net.ipv4.ping_group_range",    "net.ipv4.ip_local_reserved_ports",
    "net.ipv4.tcp_keepalive_time",  "net.ipv4.tcp_fin_timeout",     "net.ipv4.tcp_keepalive_intvl",
    "net.ipv4.tcp_keepalive_probes"};
// Restricted "Volume Types".
constexpr std::array<std::string_view, 8> kRestrictedVolumes = {
    "configMap", "csi", "downwardAPI", "emptyDir", "ephemeral", "persistentVolumeClaim", "projected", "secret"};

bool Unconfined(const json& sc) {
  return sc.contains("seccompProfile") && sc["seccompProfile"].is_object() &&
         sc["seccompProfile"].value("type", "") == "Unconfined";
}

// Baseline "SELinux": the container types a runtime confines (Kubernetes
// 1.31 added container_engine_t); spc_t and the like run unconfined.
constexpr std::array<std::string_view, 5> kBaselineSeLinuxTypes = {"", "container_t", "container_init_t",
                                                                   "container_kvm_t", "container_engine_t"};
// Baseline "AppArmor" as the annotations Kubernetes before 1.30 read (the
// API server still turns them into fields): the runtime's default or a
// profile loaded on the node.
constexpr std::string_view kAppArmorAnnotationPrefix = "container.apparmor.security.beta.kubernetes.io/";

// The baseline rules a pod's and a container's securityContext share
// (`path` names it): seccomp, AppArmor, SELinux and Windows host processes.
std::optional<Refusal> CheckBaselineContext(const json& sc, const std::string& path) {
  if (Unconfined(sc)) return Refusal{path + ".seccompProfile.type", "Unconfined is not allowed"};
  if (auto apparmor = sc.find("appArmorProfile"); apparmor != sc.end() && !apparmor->is_null()) {
    const std::string type = apparmor->is_object() ? apparmor->value("type", "") : "";
    if (type != "RuntimeDefault" && type != "Localhost") {
      return Refusal{path + ".appArmorProfile.type",
                     "AppArmor profile \"" + type + "\" is not allowed (RuntimeDefault or Localhost)"};
    }
  }
  if (auto selinux = sc.find("seLinuxOptions"); selinux != sc.end() && selinux->is_object()) {
    const std::string type = selinux->value("type", "");
    if (std::find(kBaselineSeLinuxTypes.begin(), kBaselineSeLinuxTypes.end(), type) == kBaselineSeLinuxTypes.end()) {
      return Refusal{path + ".seLinuxOptions.type",
                     "SELinux type " + type +
                         " is not allowed (container_t, container_init_t, container_kvm_t or container_engine_t)"};
    }
    for (const char* key : {"user", "role"}) {
      if (!selinux->value(key, "").empty()) {
        return Refusal{path + ".seLinuxOptions." + key, "a custom SELinux " + std::string(key) + " is not allowed"};
      }
    }
  }
  if (auto windows = sc.find("windowsOptions"); windows != sc.end() && True(*windows, "hostProcess")) {
    return Refusal{path + ".windowsOptions.hostProcess", "Windows host processes are not allowed"};
  }
  return std::nullopt;
}

std::optional<Refusal> CheckAppArmorAnnotations(const json& pod) {
  const json annotations = pod.value("metadata", json::object()).value("annotations", json::object());
  for (const auto& [key, value] : annotations.items()) {
    if (!key.starts_with(kAppArmorAnnotationPrefix)) continue;
    const std::string profile = value.is_string() ? value.get<std::string>() : value.dump();
    if (profile.empty() || profile == "runtime/default" || profile.starts_with("localhost/")) continue;
    return Refusal{"metadata.annotations[" + key + "]",
                   "AppArmor profile " + profile + " is not allowed (runtime/default or localhost/<profile>)"};
  }
  return std::nullopt;
}

std::optional<Refusal> CheckBaselineContainer(const json& c, const std::string& path) {
  const json& sc = SecurityContext(c);
  if (True(sc, "privileged")) {
    return Refusal{path + ".securityContext.privileged", "privileged containers are not allowed"};
  }
  if (auto refusal = CheckBaselineContext(sc, path + ".securityContext")) return refusal;
  if (sc.contains("procMount") && sc["procMount"] != "Default") {
    return Refusal{path + ".securityContext.procMount", "only the Default proc mount is allowed"};
  }
  if (sc.contains("capabilities") && sc["capabilities"].contains("add")) {
    for (const json& cap : sc["capabilities"]["add"]) {
      const std::string name = cap.is_string() ? cap.get<std::string>() : "";
      if (std::find(kBaselineCapabilities.begin(), kBaselineCapabilities.end(), name) == kBaselineCapabilities.end()) {
        return Refusal{path + ".securityContext.capabilities.add",
                       "capability " + name + " is beyond the baseline set"};
      }
    }
  }
  if (c.contains("ports") && c["ports"].is_array()) {
    for (std::size_t i = 0; i < c["ports"].size(); ++i) {
      if (c["ports"][i].value("hostPort", 0) != 0) {
        return Refusal{path + ".ports[" + std::to_string(i) + "].hostPort", "host ports are not allowed"};
      }
    }
  }
  return std::nullopt;
}

std::optional<Refusal> CheckRestrictedContainer(const json& c, const json& pod_sc, const std::string& path) {
  const json& sc = SecurityContext(c);
  const bool non_root = sc.contains("runAsNonRoot") ? True(sc, "runAsNonRoot") : True(pod_sc, "runAsNonRoot");
  if (!non_root) return Refusal{path + ".securityContext.runAsNonRoot", "must be true (or set on the pod)"};
  const json& seccomp = sc.contains("seccompProfile") ? sc["seccompProfile"] : pod_sc.value("seccompProfile", json());
  const std::string type = seccomp.is_object() ? seccomp.value("type", "") : "";
  if (type != "RuntimeDefault" && type != "Localhost") {
    return Refusal{path + ".securityContext.seccompProfile.type",
                   "must be RuntimeDefault or Localhost (or set on the pod)"};
  }
  if (!sc.contains("allowPrivilegeEscalation") || True(sc, "allowPrivilegeEscalation")) {
    return Refusal{path + ".securityContext.allowPrivilegeEscalation", "must be false"};
  }
  const json caps = sc.value("capabilities", json::object());
  const json drop = caps.value("drop", json::array());
  if (std::find(drop.begin(), drop.end(), json("ALL")) == drop.end()) {
    return Refusal{path + ".securityContext.capabilities.drop", "must contain ALL"};
  }
  for (const json& cap : caps.value("add", json::array())) {
    if (cap != "NET_BIND_SERVICE") {
      return Refusal{path + ".securityContext.capabilities.add", "only NET_BIND_SERVICE may be added"};
    }
  }
  return std::nullopt;
}

std::optional<Refusal> CheckBaselinePod(const json& spec) {
  for (const char* key : {"hostNetwork", "hostPID", "hostIPC"}) {
    if (True(spec, key)) return Refusal{"spec." + std::string(key), "host namespaces are not allowed"};
  }
  const json& sc = SecurityContext(spec);
  if (auto refusal = CheckBaselineContext(sc, "spec.securityContext")) return refusal;
  const json sysctls = sc.value("sysctls", json::array());
  for (std::size_t i = 0; i < sysctls.size(); ++i) {
    const std::string name = sysctls[i].value("name", "");
    if (std::find(kSafeSysctls.begin(), kSafeSysctls.end(), name) == kSafeSysctls.end()) {
      return Refusal{"spec.securityContext.sysctls[" + std::to_string(i) + "]", "sysctl " + name + " is not safe"};
    }
  }
  // Stricter than Pod Security's baseline: only the volume types restricted
  // allows. The others have the node mount storage by itself — an NFS,
  // iSCSI, Ceph or Gluster server anywhere its network reaches, past the
  // namespace's NetworkPolicy; a cloud disk by its ID, another tenant's
  // included; gitRepo runs git on the node (CVE-2024-10220) — where a
  // PersistentVolumeClaim, copied to the host and provisioned by its
  // storage class, gives the tenant storage of its own (issue 28).
  const json volumes = spec.value("volumes", json::array());
  for (std::size_t i = 0; i < volumes.size(); ++i) {
    for (const auto& [type, source] : volumes[i].items()) {
      if (type == "name") continue;
      const std::string field = "spec.volumes[" + std::to_string(i) + "]." + type;
      if (type == "hostPath") return Refusal{field, "hostPath volumes are not allowed"};
      if (std::find(kRestrictedVolumes.begin(), kRestrictedVolumes.end(), type) == kRestrictedVolumes.end()) {
        return Refusal{field, "volume type " + type +
                                  " is not allowed: the node would mount storage outside the virtual cluster; use "
                                  "a PersistentVolumeClaim"};
      }
    }
  }
  return std::nullopt;
}

}  // namespace

bool TenantMayTolerate(std::string_view key) { return key.starts_with("node.kubernetes.io/"); }

std::optional<Refusal> CheckPodSecurity(const json& pod, std::string_view psa_level) {
  if (psa_level == "privileged") return std::nullopt;
  std::optional<Refusal> refusal = CheckBaselinePod(pod.at("spec"));
  if (!refusal) refusal = CheckAppArmorAnnotations(pod);
  const json& pod_sc = SecurityContext(pod.at("spec"));
  ForEachContainer(pod.at("spec"), [&](std::string_view list, std::size_t i, const json& c) {
    if (refusal) return;
    const std::string path = Path(list, i);
    refusal = CheckBaselineContainer(c, path);
    if (!refusal && psa_level == "restricted") refusal = CheckRestrictedContainer(c, pod_sc, path);
  });
  if (refusal) refusal->message += " at Pod Security level " + std::string(psa_level);
  return refusal;
}

std::optional<Refusal> CheckHostKeys(const json& pod, const VirtualClusterView& vcluster) {
  static const std::set<std::string, std::less<>> kInputs = {
      std::string(kMigProfileAnnotation), std::string(kGpuFractionAnnotation), std::string(kGpuMemoryAnnotation),
      std::string(kGangAnnotation), std::string(kGangSizeAnnotation)};
  if (auto refusal = CheckTenantKeys(pod.value("metadata", json::object()), vcluster.integration_domains, kInputs)) {
    return refusal;
  }
  const json& spec = pod.at("spec");
  const json tolerations = spec.value("tolerations", json::array());
  for (std::size_t i = 0; i < tolerations.size(); ++i) {
    const std::string key = tolerations[i].value("key", "");
    if (key.empty() || IsHostKey(key)) {
      return Refusal{"spec.tolerations[" + std::to_string(i) + "]",
                     key.empty() ? "a toleration must name a key (an empty key tolerates other tenants' nodes)"
                                 : "taints " + key + " are the host's"};
    }
  }
  const std::string scheduler = spec.value("schedulerName", "");
  if (!scheduler.empty() && scheduler != "default-scheduler") {
    return Refusal{"spec.schedulerName", "the host picks the scheduler; \"" + scheduler + "\" is not allowed"};
  }
  const std::string runtime = spec.value("runtimeClassName", "");
  const std::string& runtime_class = vcluster.tier.runtime_class;
  if (!runtime.empty() && runtime != runtime_class) {
    return Refusal{"spec.runtimeClassName", "runtime class \"" + runtime + "\" is not allowed: the tier runs " +
                                                (runtime_class.empty() ? std::string("the host's default runtime")
                                                                       : "\"" + std::string(runtime_class) + "\"")};
  }
  return std::nullopt;
}

}  // namespace septa::tenancy::sync
