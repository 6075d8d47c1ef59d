// What a client may see of a Status. The messages of server faults (INTERNAL,
// UNKNOWN, DATA_LOSS, UNAVAILABLE, DEADLINE_EXCEEDED) are written for
// operators: database URLs, socket paths, SQL and library text. Clients get
// the canonical code and a fixed message instead; the transports' status
// mappings (services/rest/problem.cc, services/grpc/grpc_status.cc) apply this
// to every error they send and log the original under the request id.
// Messages of the other codes are written for clients and pass unchanged.
#pragma once

#include "common/status.h"

namespace septa::core {

bool IsServerFault(Code code);

// `status` itself, or for a server fault the same code with a fixed message.
Status ClientVisible(const Status& status);

}  // namespace septa::core
