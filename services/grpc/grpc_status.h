// The one mapping of septa::Status to gRPC: canonical code, message, and
// google.rpc.Status details (BadRequest field violations, RequestInfo) in
// the grpc-status-details-bin trailer. Server faults reach the client with a
// fixed message (core::ClientVisible); their detail goes to the log under
// the request id.
#pragma once

#include <grpcpp/support/status.h>

#include <string>

#include "common/status.h"

namespace septa::grpcapi {

grpc::Status ToGrpcStatus(const Status& status, const std::string& request_id);

}  // namespace septa::grpcapi
