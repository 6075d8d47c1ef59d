// The one mapping of septa::Status to HTTP: status code and an
// application/problem+json body (RFC 9457) with `code`, `message`,
// `request_id` and per-field `violations`. Server faults reach the client
// with a fixed message (core::ClientVisible), their detail goes to the log
// under the request id; a 503 carries Retry-After.
#pragma once

#include <optional>
#include <string>

#include "common/status.h"
#include "services/http/server.h"

namespace septa::rest {

http::HttpStatus HttpStatusOf(Code code);

// A problem+json response for `status` (which must not be OK), with the
// HTTP status of its code unless `http_status` says otherwise (415, 405,
// 413: transport errors the status model has no code for).
http::Response ProblemResponse(const Status& status, const std::string& request_id,
                               std::optional<http::HttpStatus> http_status = std::nullopt);

}  // namespace septa::rest
