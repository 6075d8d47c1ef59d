// Simulated containers that finish. A Running pod annotated with
// kubesim.septa.dev/run-for-ms and/or kubesim.septa.dev/exit-code (see
// workload_defaults.h) has its containers exit run-for-ms after it started
// (default 0) with that code (default 0). What follows is the pod's
// restartPolicy, as the kubelet does it: Never -> Succeeded (code 0) or
// Failed; OnFailure -> Succeeded on 0, otherwise the containers restart;
// Always (the default) -> they restart. A restarted container runs again for
// run-for-ms, but at least a second, and its restartCount goes up.
#pragma once

#include <map>
#include <string>

#include "services/kubesim/api_server.h"
#include "services/kubesim/pod_index.h"

namespace septa::kubesim {

class PodExits {
 public:
  PodExits(Cluster& cluster, const PodIndex& pods) : cluster_(cluster), pods_(pods) {}

  // Ends or restarts the containers whose time is up (cluster clock).
  void Tick();

 private:
  Cluster& cluster_;
  const PodIndex& pods_;
  std::map<std::string, TimePoint> running_since_;  // pod uid -> containers (re)started
};

}  // namespace septa::kubesim
