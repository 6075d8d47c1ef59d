// Where a virtual cluster's Kubernetes API comes from: the port the
// provisioner drives. Implemented by the simulated control plane (septad
// serves every virtual cluster with kubesim on one HTTPS listener, objects
// stored in PostgreSQL) and, for unit tests, by a fake in tests/support.
// Every operation is idempotent, so a provisioner that crashed half-way
// simply calls it again.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "common/status.h"

namespace septa::core {

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
  // API, with rights to every object in it. UNIMPLEMENTED where the syncer is
  // not supported yet (the host control planes).
  virtual Result<std::string> SyncerKubeconfig(const std::string& tenant, const std::string& vcluster) = 0;
};

}  // namespace septa::core
