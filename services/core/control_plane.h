// Where a virtual cluster's Kubernetes API comes from: the port the
// provisioner drives. Implemented by the simulated control plane (septad
// serves every virtual cluster with kubesim on one HTTPS listener, objects
// stored in PostgreSQL) and, for unit tests, by a fake in tests/support.
// Every operation is idempotent, so a provisioner that crashed half-way
// simply calls it again.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/status.h"

namespace septa::core {

// Where a virtual cluster's pods on the host reach its API server and its
// DNS: the syncer points them there (KUBERNETES_SERVICE_*, hostAliases,
// dnsConfig; tenancy::sync::SyncSettings).
struct WorkloadEndpoints {
  std::string api_host;  // an IP address
  int api_port = 0;
  std::string dns_nameserver;  // an IP address; empty: the pods keep the host's DNS
};

struct ControlPlaneState {
  bool serving = false;  // answers Kubernetes API requests
  std::string endpoint;  // the URL kubeconfigs point at; empty until serving
  std::string message;   // why it is not serving yet, for the condition
};

class ControlPlanes {
 public:
  virtual ~ControlPlanes() = default;

  // Brings the control plane of tenant/vcluster into being, or keeps the
  // one there, and says where it stands.
  virtual Result<ControlPlaneState> Ensure(const std::string& tenant, const std::string& vcluster) = 0;
  // Removes the control plane and every object stored in it; Ok when it is
  // already gone.
  virtual Status Remove(const std::string& tenant, const std::string& vcluster) = 0;
  // The (tenant, vcluster) pairs that have one, to find orphans after a crash.
  virtual Result<std::vector<std::pair<std::string, std::string>>> List() = 0;
  // A kubeconfig for the syncer (services/syncer) to the virtual cluster's
  // API, with rights to every object in it.
  virtual Result<std::string> SyncerKubeconfig(const std::string& tenant, const std::string& vcluster) = 0;
  // Where the virtual cluster's pods reach its API server and DNS, when each
  // virtual cluster has its own (a control plane on the host); nullopt when
  // the syncer's configured settings say it for all (septad serves them).
  virtual Result<std::optional<WorkloadEndpoints>> WorkloadEndpointsOf(const std::string& tenant,
                                                                       const std::string& vcluster) {
    return std::optional<WorkloadEndpoints>();
  }
};

}  // namespace septa::core
