// Errors are values at layer boundaries. One status model with the canonical
// (gRPC) codes; services/rest and services/grpc map it to HTTP and gRPC once.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace septa {

enum class Code {
  kOk = 0,
  kCancelled = 1,
  kUnknown = 2,
  kInvalidArgument = 3,
  kDeadlineExceeded = 4,
  kNotFound = 5,
  kAlreadyExists = 6,
  kPermissionDenied = 7,
  kResourceExhausted = 8,
  kFailedPrecondition = 9,
  kAborted = 10,
  kOutOfRange = 11,
  kUnimplemented = 12,
  kInternal = 13,
  kUnavailable = 14,
  kDataLoss = 15,
  kUnauthenticated = 16,
};

// "INVALID_ARGUMENT", "NOT_FOUND", ... as gRPC spells them.
std::string_view CodeName(Code code);

// One bad field of a request: `field` is the JSON / proto path
// ("trust_tier", "labels.team", "spec.containers[0].name").
struct FieldViolation {
  std::string field;
  std::string description;
  bool operator==(const FieldViolation&) const = default;
};

// [[nodiscard]]: a dropped Status is a swallowed error.
class [[nodiscard]] Status {
 public:
  Status() = default;  // OK
  Status(Code code, std::string message, std::vector<FieldViolation> violations = {})
      : code_(code), message_(std::move(message)), violations_(std::move(violations)) {}

  static Status Ok() { return {}; }

  bool ok() const { return code_ == Code::kOk; }
  Code code() const { return code_; }
  const std::string& message() const { return message_; }
  const std::vector<FieldViolation>& violations() const { return violations_; }

  // "NOT_FOUND: tenant \"acme\" not found"
  std::string ToString() const;

  // Keeps the first error: becomes `other` only while this is OK (as
  // absl::Status::Update), for work that goes on past a failure and
  // reports the first.
  void Update(const Status& other) {
    if (ok()) *this = other;
  }

 private:
  Code code_ = Code::kOk;
  std::string message_;
  std::vector<FieldViolation> violations_;
};

// Shorthands; the message should name what was wrong.
Status InvalidArgument(std::string message);
// A single bad field: message "<field>: <description>" plus the violation.
Status InvalidField(std::string field, std::string description);
// The same with another code: a field that is well-formed but refused by
// the state of things (kFailedPrecondition), or that asks for more than is
// left (kResourceExhausted).
Status FieldError(Code code, std::string field, std::string description);
Status NotFound(std::string message);
Status AlreadyExists(std::string message);
Status FailedPrecondition(std::string message);
Status PermissionDenied(std::string message);
Status Unauthenticated(std::string message);
Status Aborted(std::string message);
Status Unavailable(std::string message);
Status Internal(std::string message);
Status ResourceExhausted(std::string message);
Status DeadlineExceeded(std::string message);
Status Unimplemented(std::string message);
Status OutOfRange(std::string message);

// An OK status where a Result's error belongs: the bug it reports.
Status OkStatusInResult();

// A value or the reason there is none. Built from an OK status (a bug: there is
// neither), it holds an INTERNAL error instead, in every build type, so the caller
// never reads a value that is not there.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}                                            // NOLINT: implicit on purpose
  Result(Status status) : v_(status.ok() ? OkStatusInResult() : std::move(status)) {}  // NOLINT

  bool ok() const { return std::holds_alternative<T>(v_); }
  explicit operator bool() const { return ok(); }

  const Status& status() const {
    static const Status kOk;
    return ok() ? kOk : std::get<Status>(v_);
  }
  T& value() & { return std::get<T>(v_); }
  const T& value() const& { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T&& operator*() && { return std::move(*this).value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

 private:
  std::variant<T, Status> v_;
};

}  // namespace septa

// Propagates a non-OK Status (or the status of a failed Result) to the caller.
#define SEPTA_RETURN_IF_ERROR(expr)                                \
  do {                                                             \
    const ::septa::Status septa_status_ = ::septa::ToStatus(expr); \
    if (!septa_status_.ok()) return septa_status_;                 \
  } while (0)

// Declares (or assigns) `lhs` from a Result's value, or returns its error:
//   SEPTA_ASSIGN_OR_RETURN(auto tenant, store.Get(name));
// `lhs` must not be used again on the same line's expansion (one per line).
#define SEPTA_ASSIGN_OR_RETURN(lhs, expr) \
  SEPTA_ASSIGN_OR_RETURN_IMPL_(SEPTA_CONCAT_(septa_result_, __LINE__), lhs, expr)
#define SEPTA_ASSIGN_OR_RETURN_IMPL_(result, lhs, expr) \
  auto result = (expr);                                 \
  if (!result.ok()) return result.status();             \
  lhs = *std::move(result)
#define SEPTA_CONCAT_(a, b) SEPTA_CONCAT_INNER_(a, b)
#define SEPTA_CONCAT_INNER_(a, b) a##b

namespace septa {
inline const Status& ToStatus(const Status& s) { return s; }
template <typename T>
const Status& ToStatus(const Result<T>& r) {
  return r.status();
}

// The checks callers make of an error's code; a Result that holds a value
// is none of them.
template <typename S>
bool IsNotFound(const S& s) {
  return ToStatus(s).code() == Code::kNotFound;
}
template <typename S>
bool IsAlreadyExists(const S& s) {
  return ToStatus(s).code() == Code::kAlreadyExists;
}
template <typename S>
bool IsAborted(const S& s) {
  return ToStatus(s).code() == Code::kAborted;
}
}  // namespace septa
