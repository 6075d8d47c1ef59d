// KAI's PodGroups of the virtual clusters' gangs (tenancy/sync/gangs.h):
// made before a gang's first host pod, deleted once no virtual or host pod
// of the virtual cluster names the gang. Used by the syncer with the
// virtual cluster's placement lock held, so a group is never collected
// between its Ensure and the create of the pod that needs it.
#pragma once

#include <optional>
#include <set>
#include <string>

#include "common/status.h"
#include "services/kube/client.h"
#include "tenancy/sync/gangs.h"

namespace septa::syncer {

class PodGroups {
 public:
  explicit PodGroups(kube::Client& host) : host_(host) {}

  // The PodGroup of `gang` of virtual namespace `ns` exists as wanted, or
  // why its member may not run: the PodGroup of that host name is a gang's
  // of another namespace (HostGangName is not injective), never written over.
  Result<std::optional<tenancy::sync::Refusal>> Ensure(const tenancy::sync::VirtualClusterView& view,
                                                       const std::string& ns, const tenancy::sync::Gang& gang);
  // Deletes the virtual cluster's PodGroups whose host names are not in
  // `in_use` (a live list of its host namespace, by its labels); says how many.
  Result<int> Collect(const tenancy::sync::VirtualClusterView& view, const std::set<std::string>& in_use);

 private:
  kube::Client& host_;
};

}  // namespace septa::syncer
