// The one line septactl prints on stderr when something fails:
//   septactl: <CODE>: <message>[ (field: <f>)]...
// with the fields taken from the google.rpc.BadRequest in the status
// details, so a script or a person sees which flag to fix.
#pragma once

#include <grpcpp/support/status.h>

#include <string>
#include <string_view>

#include "common/status.h"

namespace septa::cli {

// A failed call to `server`. Unreachable servers and timeouts name the
// server, since gRPC's own text does not say which address was meant.
std::string ErrorLine(const grpc::Status& status, std::string_view server);

// A failure on this side of the wire (usage, config file).
std::string ErrorLine(const Status& status);

}  // namespace septa::cli
