// A virtual cluster's pods as its tenant needs them in the portal: which do
// not run, and why — refused by the syncer, waiting for room on the host
// (the reservation is full or the queue holds it), a container that cannot
// start — read from the virtual cluster's own API store.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "services/core/auth.h"
#include "services/core/store.h"
#include "services/core/virtual_object_store.h"

namespace septa::core {

struct VirtualPodStatus {
  std::string ns;
  std::string name;
  std::string phase;  // "Pending" when the pod reports none yet
  std::string reason;
  std::string message;
  std::string create_time;  // RFC 3339, as stored; may be empty
  std::string since;        // the deciding condition's lastTransitionTime; may be empty
  bool Running() const { return phase == "Running" || phase == "Succeeded"; }
};

// Pure: what a stored pod (its JSON, as the tenant's API keeps it) says of
// itself. The deciding reason, first that applies: PodScheduled False (the
// syncer's SyncRefused, the host's Unschedulable), a container's waiting
// reason, a Failed pod's own reason. Errors for a body that is not a pod.
Result<VirtualPodStatus> DescribeVirtualPod(std::string_view json);

struct VirtualPodPage {
  std::vector<VirtualPodStatus> pods;  // by namespace, then name
  std::string next_page_token;
};

struct ListVirtualPodsParams {
  bool not_running = false;
  int page_size = 0;  // 0: the default
  std::string page_token{};
};

class VirtualPodService {
 public:
  static constexpr int kDefaultPageSize = 100;
  static constexpr int kMaxPageSize = 500;

  // `pods_stored`: the virtual clusters' APIs are septad's own (control
  // planes simulated), so their pods are in `objects`; on host control
  // planes they are not, and List says so.
  VirtualPodService(Store& store, VirtualObjectStore& objects, bool pods_stored)
      : store_(store), objects_(objects), pods_stored_(pods_stored) {}

  // The tenant's principals (viewers too) and admins; others get NOT_FOUND.
  Result<VirtualPodPage> List(const RequestContext& ctx, const std::string& tenant, const std::string& vcluster,
                              const ListVirtualPodsParams& params);

 private:
  Store& store_;
  VirtualObjectStore& objects_;
  const bool pods_stored_;
};

}  // namespace septa::core
