#include "common/status.h"

namespace septa {

std::string_view CodeName(Code code) {
  switch (code) {
    case Code::kOk: return "OK";
    case Code::kCancelled: return "CANCELLED";
    case Code::kUnknown: return "UNKNOWN";
    case Code::kInvalidArgument: return "INVALID_ARGUMENT";
    case Code::kDeadlineExceeded: return "DEADLINE_EXCEEDED";
    case Code::kNotFound: return "NOT_FOUND";
    case Code::kAlreadyExists: return "ALREADY_EXISTS";
    case Code::kPermissionDenied: return "PERMISSION_DENIED";
    case Code::kResourceExhausted: return "RESOURCE_EXHAUSTED";
    case Code::kFailedPrecondition: return "FAILED_PRECONDITION";
    case Code::kAborted: return "ABORTED";
    case Code::kOutOfRange: return "OUT_OF_RANGE";
    case Code::kUnimplemented: return "UNIMPLEMENTED";
    case Code::kInternal: return "INTERNAL";
    case Code::kUnavailable: return "UNAVAILABLE";
    case Code::kDataLoss: return "DATA_LOSS";
    case Code::kUnauthenticated: return "UNAUTHENTICATED";
  }
  return "UNKNOWN";
}

std::string Status::ToString() const {
  if (ok()) return "OK";
  std::string out(CodeName(code_));
  out += ": ";
  out += message_;
  return out;
}

Status InvalidArgument(std::string m) { return {Code::kInvalidArgument, std::move(m)}; }
Status InvalidField(std::string field, std::string description) {
  return FieldError(Code::kInvalidArgument, std::move(field), std::move(description));
}
Status FieldError(Code code, std::string field, std::string description) {
  std::string message = field + ": " + description;
  return {code, std::move(message), {FieldViolation{std::move(field), std::move(description)}}};
}
Status NotFound(std::string m) { return {Code::kNotFound, std::move(m)}; }
Status AlreadyExists(std::string m) { return {Code::kAlreadyExists, std::move(m)}; }
Status FailedPrecondition(std::string m) { return {Code::kFailedPrecondition, std::move(m)}; }
Status PermissionDenied(std::string m) { return {Code::kPermissionDenied, std::move(m)}; }
Status Unauthenticated(std::string m) { return {Code::kUnauthenticated, std::move(m)}; }
Status Aborted(std::string m) { return {Code::kAborted, std::move(m)}; }
Status Unavailable(std::string m) { return {Code::kUnavailable, std::move(m)}; }
Status Internal(std::string m) { return {Code::kInternal, std::move(m)}; }
Status ResourceExhausted(std::string m) { return {Code::kResourceExhausted, std::move(m)}; }
Status DeadlineExceeded(std::string m) { return {Code::kDeadlineExceeded, std::move(m)}; }
Status Unimplemented(std::string m) { return {Code::kUnimplemented, std::move(m)}; }
Status OutOfRange(std::string m) { return {Code::kOutOfRange, std::move(m)}; }

Status OkStatusInResult() { return Internal("a Result was built from an OK status, with no value"); }

}  // namespace septa
