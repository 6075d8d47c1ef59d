// This replica's identity, the holder name of its controllers' shard leases
// (config replica_id). Stable across restarts, so that a replica restarted
// after a crash takes its own leases back at once; unique among live
// replicas, which store::ReplicaLock enforces.
#pragma once

#include <string>

#include "common/clock.h"
#include "common/status.h"

namespace septa::app {

// `configured` when set; otherwise the id kept in <data_dir>/replica_id,
// made on the first start as "<host name>-<8 hex digits from random>": one
// per data directory, so two septads on one host with their own data
// directories are two replicas.
[[nodiscard]] Result<std::string> ResolveReplicaId(const std::string& configured, const std::string& data_dir,
                                                   RandomSource& random);

}  // namespace septa::app
