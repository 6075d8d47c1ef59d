// Kubernetes API errors, rendered as the `Status` body a real API server
// sends (PROTOCOL-FACTS.md, "Objects and errors").
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <variant>
#include <vector>

namespace septa::kubesim {

struct StatusCause {
  std::string reason;  // "FieldValueRequired", "FieldValueInvalid", ...
  std::string message;
  std::string field;
};

struct ApiError {
  int code = 500;
  std::string reason;  // "NotFound", "AlreadyExists", "Conflict", "Invalid", ...
  std::string message;
  std::string name, group, kind;  // details
  std::vector<StatusCause> causes;
  int retry_after_seconds = 0;

  nlohmann::json ToJson() const;
};

template <typename T>
using ApiResult = std::variant<T, ApiError>;

template <typename T>
bool IsError(const ApiResult<T>& r) {
  return std::holds_alternative<ApiError>(r);
}

// Constructors for the errors kubesim gives; `what` is "pods \"web\"",
// i.e. resource then quoted name, as in the server's messages.
ApiError NotFoundError(const std::string& resource, const std::string& group, const std::string& name);
ApiError AlreadyExistsError(const std::string& resource, const std::string& group, const std::string& name);
ApiError ConflictError(const std::string& resource, const std::string& group, const std::string& name,
                       const std::string& why);
ApiError StaleUpdateError(const std::string& resource, const std::string& group, const std::string& name);
ApiError InvalidError(const std::string& kind, const std::string& group, const std::string& name,
                      std::vector<StatusCause> causes);
ApiError BadRequestError(std::string message);
ApiError ForbiddenError(std::string message);
ApiError UnauthorizedError();
ApiError GoneError(std::string message);  // 410 Expired
ApiError MethodNotAllowedError(std::string message);
ApiError UnsupportedMediaTypeError(std::string message);
ApiError InternalError(std::string message);
ApiError ServiceUnavailableError(std::string message);  // Retry-After: 1

}  // namespace septa::kubesim
