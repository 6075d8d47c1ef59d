// The CustomResourceDefinitions of the schedulers Septa drives (KAI-Scheduler's
// Queue and PodGroup, Kueue's ResourceFlavor, ClusterQueue, LocalQueue and
// Workload), which kubesim installs at start so that what the provisioner
// writes for them is served. The manifests are services/kubesim/crds/*.yaml,
// compiled in.
#pragma once

#include <string_view>
#include <vector>

#include "common/status.h"
#include "services/kubesim/api_server.h"

namespace septa::kubesim {

// The manifests' YAML text, one CRD each.
std::vector<std::string_view> SchedulerCrdManifests();

// Creates every scheduler CRD on `api` (an internal error names the manifest
// that does not parse or is refused: a bug in the build, not in the input).
Status InstallSchedulerCrds(ApiServer& api);

}  // namespace septa::kubesim
