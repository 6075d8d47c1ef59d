// What a virtual pod may not ask for, checked before anything is written:
// the Pod Security Standards at its tier's level, and the keys and fields by
// which a pod could reach past its reservation on the host (Septa's own
// `septa.dev/` bookkeeping, the schedulers' queue labels and GPU
// annotations, tolerations of other tenants' taints, another scheduler or
// runtime class). A pod that breaks one is refused, never silently altered.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string_view>

#include "tenancy/sync/pod_translation.h"

namespace septa::tenancy::sync {

// Pod Security Standards (kubernetes.io/docs/concepts/security/pod-security-standards):
// "privileged" allows everything; "baseline" forbids host namespaces,
// hostPath volumes, privileged containers, capabilities beyond the default
// set, host ports, unsafe sysctls, a non-default procMount, Windows host
// processes, and the profiles that lift confinement: seccomp or AppArmor
// Unconfined (field or annotation), an SELinux type other than the
// container ones, a custom SELinux user or role; "restricted" also requires runAsNonRoot, a
// RuntimeDefault or Localhost seccomp profile, capabilities dropped to ALL
// (NET_BIND_SERVICE the only one added back) and no privilege escalation.
std::optional<Refusal> CheckPodSecurity(const nlohmann::json& pod, std::string_view psa_level);

// Labels, annotations, tolerations, schedulerName and runtimeClassName that
// are the host's to set; `runtime_class` is what the tier patches in.
std::optional<Refusal> CheckHostKeys(const nlohmann::json& pod, std::string_view runtime_class);

// Whether a tenant may copy label or annotation `key` to the host: false for
// Septa's (`septa.dev/`, `vcluster.septa.dev/`) and the host schedulers' keys.
bool IsHostKey(std::string_view key);

}  // namespace septa::tenancy::sync
