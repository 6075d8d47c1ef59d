#include "services/cli/error_line.h"

#include <algorithm>

#include "google/rpc/error_details.pb.h"
#include "google/rpc/status.pb.h"
#include "services/core/validation.h"

namespace septa::cli {

namespace {

// Error text from the server or gRPC may span lines (the contract is one) and
// may quote what a client sent (never obeyed by the terminal).
std::string OneLine(std::string text) {
  std::replace_if(
      text.begin(), text.end(), [](char c) { return c == '\n' || c == '\r'; }, ' ');
  return core::EscapeControlCharacters(text);
}

std::string FieldSuffix(const grpc::Status& status) {
  std::string suffix;
  for (const auto& violation : FieldViolations(status)) suffix += " (field: " + violation.field + ")";
  return suffix;
}

}  // namespace

std::vector<FieldViolation> FieldViolations(const grpc::Status& status) {
  google::rpc::Status details;
  std::vector<FieldViolation> violations;
  if (status.error_details().empty() || !details.ParseFromString(status.error_details())) return violations;
  for (const auto& any : details.details()) {
    google::rpc::BadRequest bad_request;
    if (!any.UnpackTo(&bad_request)) continue;
    for (const auto& violation : bad_request.field_violations()) {
      violations.push_back({violation.field(), violation.description()});
    }
  }
  return violations;
}

std::string ErrorLine(const grpc::Status& status, std::string_view server) {
  const auto code = static_cast<Code>(status.error_code());
  std::string message = status.error_message();
  if (code == Code::kUnavailable) {
    message = "cannot reach septad at " + std::string(server) + ": " + message;
  } else if (code == Code::kDeadlineExceeded) {
    message = "no answer from septad at " + std::string(server) + " in time (see --timeout): " + message;
  }
  return OneLine("septactl: " + std::string(CodeName(code)) + ": " + message + FieldSuffix(status));
}

std::string ErrorLines(const grpc::Status& status, std::string_view server,
                       const std::function<std::string(const std::string& field)>& locate) {
  std::string lines = ErrorLine(grpc::Status(status.error_code(), status.error_message()), server) + "\n";
  for (const auto& violation : FieldViolations(status)) {
    lines += OneLine("  " + locate(violation.field) + ": " + violation.description) + "\n";
  }
  return lines;
}

std::string ErrorLine(const Status& status) {
  std::string suffix;
  for (const auto& violation : status.violations()) suffix += " (field: " + violation.field + ")";
  return OneLine("septactl: " + std::string(CodeName(status.code())) + ": " + status.message() + suffix);
}

}  // namespace septa::cli
