// The open-file limit of the process. Every connection is a descriptor, and
// septad holds several per virtual cluster (the syncer's watches of its API
// and their server ends, in the same process), so the soft limit that
// shells and systemd hand out (often 1,024) would run out long before a
// thousand virtual clusters do.
#pragma once

#include <cstdint>

namespace septa::base {

// Raises the soft RLIMIT_NOFILE to the hard one (which needs no privilege)
// and returns the soft limit now in force.
std::uint64_t RaiseOpenFilesLimit();

}  // namespace septa::base
