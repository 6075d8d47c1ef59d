// The one line septactl prints on stderr when something fails:
//   septactl: <CODE>: <message>[ (field: <f>)]...
// with the fields taken from the google.rpc.BadRequest in the status
// details, so a script or a person sees which flag to fix.
#pragma once

#include <grpcpp/support/status.h>

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace septa::cli {

// A failed call to `server`. Unreachable servers and timeouts name the
// server, since gRPC's own text does not say which address was meant.
std::string ErrorLine(const grpc::Status& status, std::string_view server);

// The field violations of a failed call (a google.rpc.BadRequest in its
// details), in the order sent.
std::vector<FieldViolation> FieldViolations(const grpc::Status& status);

// A failed call whose violations are many (an apply refused object by
// object): ErrorLine without the fields, then a line per violation,
// "  <locate(field)>: <description>", where `locate` tells the reader where
// the field is. Each line ends in a newline.
std::string ErrorLines(const grpc::Status& status, std::string_view server,
                       const std::function<std::string(const std::string& field)>& locate);

// A failure on this side of the wire (usage, config file).
std::string ErrorLine(const Status& status);

}  // namespace septa::cli
