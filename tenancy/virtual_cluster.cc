#include "tenancy/virtual_cluster.h"

namespace septa::tenancy {

std::string_view VirtualClusterStateName(VirtualClusterState state) {
  switch (state) {
    case VirtualClusterState::kProvisioning: return "PROVISIONING";
    case VirtualClusterState::kReady: return "READY";
    case VirtualClusterState::kSleeping: return "SLEEPING";
    case VirtualClusterState::kDeleting: return "DELETING";
    case VirtualClusterState::kFailed: return "FAILED";
  }
  return "UNKNOWN";
}

}  // namespace septa::tenancy
