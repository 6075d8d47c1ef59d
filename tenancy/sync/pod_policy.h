// What a virtual pod may not ask for, checked before anything is written:
// the Pod Security Standards at its tier's level, and the keys and fields by
// which a pod could reach past its reservation on the host (the host's
// labels and annotations, host_keys.h; tolerations of the platform's
// taints; another scheduler or runtime class). A pod that breaks one is
// refused, never silently altered.
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
// container ones, a custom SELinux user or role — and, stricter than the
// standard, every volume type restricted does not allow (the node would
// mount storage outside the virtual cluster: NFS past the NetworkPolicy,
// another tenant's cloud disk by ID, gitRepo's git on the node); "restricted" also requires runAsNonRoot, a
// RuntimeDefault or Localhost seccomp profile, capabilities dropped to ALL
// (NET_BIND_SERVICE the only one added back) and no privilege escalation.
std::optional<Refusal> CheckPodSecurity(const nlohmann::json& pod, std::string_view psa_level);

// Labels and annotations that are the host's (host_keys.h), tolerations
// without a key (they tolerate every node) or of Septa's taints, another
// scheduler, and a runtime class other than the one the tier patches in.
std::optional<Refusal> CheckHostKeys(const nlohmann::json& pod, const VirtualClusterView& vcluster);

// Whether a tenant's toleration of taint `key` reaches the host pod: only
// node.kubernetes.io/ (not-ready, unreachable, memory-pressure...), which
// say a node is unwell. A pod reaches a GPU node through its reservation,
// whose node's taints the tier patches tolerate, never through a toleration
// of its own (issue 28, H2): other tolerations, such as the
// `nvidia.com/gpu` one GPU charts carry, are not copied.
bool TenantMayTolerate(std::string_view key);

}  // namespace septa::tenancy::sync
