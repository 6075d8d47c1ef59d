// A virtual pod's inter-pod (anti-)affinity, scoped to its own virtual
// cluster on the host. A term's namespaces are virtual namespaces; on the
// host, a term with `namespaceSelector: {}` would select every namespace of
// the host cluster, and kube-scheduler honours an existing pod's required
// anti-affinity for every pod it places (the rule is symmetric): one
// tenant's pod could keep every other tenant's pods off its node (issue 28,
// a sibling of H2). So each term is pinned to the host namespace, and the
// virtual namespaces it meant become a requirement on the
// `septa.dev/namespace` label every host pod carries:
//   no namespaces, no selector  -> the pod's own virtual namespace
//   namespaces [a, b]           -> a and b
//   namespaceSelector {}        -> every namespace of the virtual cluster
// A namespace selector with labels cannot be judged on the host (it sees no
// virtual namespace) and is refused. Topology spread constraints count pods
// of the pod's own namespace: the host namespace, narrowed likewise to the
// pod's virtual namespace.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "tenancy/sync/pod_translation.h"

namespace septa::tenancy::sync {

// Rewrites `spec` (a host pod's spec, from the virtual pod of namespace
// `virtual_ns`) in place; a refusal names the virtual field.
std::optional<Refusal> ScopePodAffinity(nlohmann::json& spec, const std::string& virtual_ns,
                                        const std::string& host_namespace);

}  // namespace septa::tenancy::sync
