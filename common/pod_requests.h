// A pod's effective requests (or limits), as kube-scheduler, the kubelet
// and ResourceQuota count them (k8s.io/component-helpers/resource
// PodRequests, KEP-753 "Exposing Pod Resource Requirements"): the regular
// containers and the sidecars (init containers with restartPolicy Always)
// run together and add up; a plain init container runs alone, beside the
// sidecars started before it. So the pod holds
//   max(sum(containers) + sum(sidecars),
//       max over plain init containers i of (i + sum(sidecars before i))).
// One rule for every place that sums a pod's resources: the syncer's GPU
// count (tenancy/sync/gpu_request.cc) and kubesim's scheduler and quota
// (services/kubesim/quota.cc PodTotal), so that neither under-counts what
// the host's scheduler will hold.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace septa {

enum class ContainerRole {
  kContainer,  // spec.containers
  kInit,       // spec.initContainers without restartPolicy Always
  kSidecar,    // spec.initContainers with restartPolicy Always
};

// The role of an entry of spec.containers (`init` false) or
// spec.initContainers (`init` true) whose restartPolicy is `restart_policy`.
inline ContainerRole RoleOf(bool init, const std::string& restart_policy) {
  if (!init) return ContainerRole::kContainer;
  return restart_policy == "Always" ? ContainerRole::kSidecar : ContainerRole::kInit;
}

// One container's amounts by resource name. Amount: anything with += and <
// (an integer count, thousandths, or a quantity that keeps its format).
template <typename Amount>
struct ContainerAmounts {
  ContainerRole role = ContainerRole::kContainer;
  std::map<std::string, Amount> amounts;
};

// The pod's effective amounts; `containers` holds the init containers in
// the order of spec.initContainers (the regular ones anywhere). A pod's
// overhead is the caller's to add.
template <typename Amount>
std::map<std::string, Amount> EffectivePodAmounts(const std::vector<ContainerAmounts<Amount>>& containers) {
  const auto add = [](std::map<std::string, Amount>& to, const std::map<std::string, Amount>& more) {
    for (const auto& [name, amount] : more) to[name] += amount;
  };
  const auto raise = [](std::map<std::string, Amount>& to, const std::map<std::string, Amount>& more) {
    for (const auto& [name, amount] : more) {
      Amount& have = to[name];
      if (have < amount) have = amount;
    }
  };
  std::map<std::string, Amount> running;   // containers and sidecars, together
  std::map<std::string, Amount> sidecars;  // the sidecars started so far
  std::map<std::string, Amount> init_peak;
  for (const ContainerAmounts<Amount>& c : containers) {
    switch (c.role) {
      case ContainerRole::kContainer: add(running, c.amounts); break;
      case ContainerRole::kSidecar:
        add(running, c.amounts);
        add(sidecars, c.amounts);
        break;
      case ContainerRole::kInit: {
        std::map<std::string, Amount> during = sidecars;
        add(during, c.amounts);
        raise(init_peak, during);
        break;
      }
    }
  }
  raise(running, init_peak);
  return running;
}

}  // namespace septa
