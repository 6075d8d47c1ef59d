// Kubernetes API errors, rendered as the `Status` body a real API server
// sends (PROTOCOL-FACTS.md, "Objects and errors").
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <utility>
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

// A value or the API error that stands in its place, shaped like septa::Result
// (common/status.h): implicit from either, `ok()`, the value through `*`, `->`
// and `value()`, the error through `error()`. Reading the side that is not
// there throws std::bad_variant_access in every build type (as Result's value()
// does), so it is never undefined behaviour.
template <typename T>
class [[nodiscard]] ApiResult {
 public:
  ApiResult(T value) : v_(std::move(value)) {}         // NOLINT: implicit on purpose
  ApiResult(ApiError error) : v_(std::move(error)) {}  // NOLINT

  bool ok() const { return std::holds_alternative<T>(v_); }
  explicit operator bool() const { return ok(); }

  // Only when !ok().
  ApiError& error() & { return std::get<ApiError>(v_); }
  const ApiError& error() const& { return std::get<ApiError>(v_); }
  ApiError&& error() && { return std::get<ApiError>(std::move(v_)); }

  // Only when ok().
  T& value() & { return std::get<T>(v_); }
  const T& value() const& { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T&& operator*() && { return std::move(*this).value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

 private:
  std::variant<T, ApiError> v_;
};

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

// Returns a failed ApiResult's error (a copy) to the caller, whose own
// ApiResult<U> it becomes; as SEPTA_RETURN_IF_ERROR.
#define KUBESIM_RETURN_IF_ERROR(expr)                          \
  do {                                                         \
    const auto& kubesim_result_ = (expr);                      \
    if (!kubesim_result_.ok()) return kubesim_result_.error(); \
  } while (0)

// Declares (or assigns) `lhs` from an ApiResult's value, or returns its error:
//   KUBESIM_ASSIGN_OR_RETURN(json body, ParseBody(call));
// As SEPTA_ASSIGN_OR_RETURN: one per line (the temporary is named by __LINE__).
#define KUBESIM_ASSIGN_OR_RETURN(lhs, expr) \
  KUBESIM_ASSIGN_OR_RETURN_IMPL_(KUBESIM_CONCAT_(kubesim_result_, __LINE__), lhs, expr)
#define KUBESIM_ASSIGN_OR_RETURN_IMPL_(result, lhs, expr) \
  auto result = (expr);                                   \
  if (!result.ok()) return std::move(result).error();     \
  lhs = *std::move(result)
#define KUBESIM_CONCAT_(a, b) KUBESIM_CONCAT_INNER_(a, b)
#define KUBESIM_CONCAT_INNER_(a, b) a##b
