#include "services/rest/problem.h"

#include <spdlog/spdlog.h>
#include <boost/beast/http/field.hpp>
#include <nlohmann/json.hpp>

#include "services/core/client_status.h"

namespace septa::rest {
namespace {

// What a 503 tells clients to wait before retrying.
constexpr char kRetryAfterSeconds[] = "1";

}  // namespace

http::HttpStatus HttpStatusOf(Code code) {
  using S = http::HttpStatus;
  switch (code) {
    case Code::kOk: return S::ok;
    case Code::kInvalidArgument:
    case Code::kOutOfRange: return S::bad_request;
    case Code::kUnauthenticated: return S::unauthorized;
    case Code::kPermissionDenied: return S::forbidden;
    case Code::kNotFound: return S::not_found;
    case Code::kAlreadyExists:
    case Code::kAborted: return S::conflict;
    // Septa's only failed preconditions are stale etags and If-Match headers.
    case Code::kFailedPrecondition: return S::precondition_failed;
    case Code::kResourceExhausted: return S::too_many_requests;
    case Code::kCancelled: return static_cast<S>(499);
    case Code::kUnimplemented: return S::not_implemented;
    case Code::kUnavailable: return S::service_unavailable;
    case Code::kDeadlineExceeded: return S::gateway_timeout;
    case Code::kUnknown:
    case Code::kInternal:
    case Code::kDataLoss: return S::internal_server_error;
  }
  return S::internal_server_error;
}

http::Response ProblemResponse(const Status& status, const std::string& request_id,
                               std::optional<http::HttpStatus> override_status) {
  const http::HttpStatus http_status = override_status.value_or(HttpStatusOf(status.code()));
  if (core::IsServerFault(status.code())) {
    spdlog::error("http request_id={} code={} detail: {}", request_id, CodeName(status.code()), status.message());
  }
  const Status shown = core::ClientVisible(status);
  nlohmann::json body = {
      {"type", "about:blank"},
      {"title", std::string(boost::beast::http::obsolete_reason(http_status))},
      {"status", static_cast<int>(http_status)},
      {"code", std::string(CodeName(status.code()))},
      {"message", shown.message()},
      {"request_id", request_id},
  };
  if (!shown.violations().empty()) {
    nlohmann::json violations = nlohmann::json::array();
    for (const auto& v : shown.violations()) violations.push_back({{"field", v.field}, {"description", v.description}});
    body["violations"] = std::move(violations);
  }
  http::Response response(http_status, 11);
  response.set(boost::beast::http::field::content_type, "application/problem+json");
  // Unavailable is transient (a database restarting, stalled or overloaded).
  if (status.code() == Code::kUnavailable) response.set(boost::beast::http::field::retry_after, kRetryAfterSeconds);
  response.body() = body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  return response;
}

}  // namespace septa::rest
