#include "services/cli/error_line.h"

#include <gtest/gtest.h>

#include "google/rpc/error_details.pb.h"
#include "google/rpc/status.pb.h"

namespace septa::cli {
namespace {

// As septad sends it: BadRequest violations plus RequestInfo.
grpc::Status WithDetails(grpc::StatusCode code, const std::string& message, const std::vector<std::string>& fields) {
  google::rpc::Status details;
  details.set_code(code);
  details.set_message(message);
  google::rpc::BadRequest bad_request;
  for (const auto& field : fields) {
    auto* violation = bad_request.add_field_violations();
    violation->set_field(field);
    violation->set_description("is wrong");
  }
  if (!fields.empty()) details.add_details()->PackFrom(bad_request);
  google::rpc::RequestInfo info;
  info.set_request_id("req-1");
  details.add_details()->PackFrom(info);
  return grpc::Status(code, message, details.SerializeAsString());
}

TEST(ErrorLine, CodeAndMessage) {
  EXPECT_EQ(ErrorLine(WithDetails(grpc::StatusCode::NOT_FOUND, "tenant \"x\" not found", {}), "h:1"),
            "septactl: NOT_FOUND: tenant \"x\" not found");
}

TEST(ErrorLine, NamesEachViolatedField) {
  EXPECT_EQ(
      ErrorLine(WithDetails(grpc::StatusCode::INVALID_ARGUMENT, "invalid tenant", {"trust_tier", "labels.a"}), "h:1"),
      "septactl: INVALID_ARGUMENT: invalid tenant (field: trust_tier) (field: labels.a)");
}

TEST(ErrorLine, WithoutDetails) {
  EXPECT_EQ(ErrorLine(grpc::Status(grpc::StatusCode::PERMISSION_DENIED, "no"), "h:1"),
            "septactl: PERMISSION_DENIED: no");
}

TEST(ErrorLine, GarbageDetailsAreIgnored) {
  EXPECT_EQ(ErrorLine(grpc::Status(grpc::StatusCode::INTERNAL, "boom", "\xff\xff not a proto"), "h:1"),
            "septactl: INTERNAL: boom");
}

TEST(ErrorLine, UnreachableServerIsNamed) {
  EXPECT_EQ(
      ErrorLine(grpc::Status(grpc::StatusCode::UNAVAILABLE, "failed to connect\nConnection refused"), "10.0.0.1:9090"),
      "septactl: UNAVAILABLE: cannot reach septad at 10.0.0.1:9090: failed to connect Connection refused");
}

TEST(ErrorLine, DeadlineNamesServerAndFlag) {
  EXPECT_EQ(ErrorLine(grpc::Status(grpc::StatusCode::DEADLINE_EXCEEDED, "Deadline Exceeded"), "h:1"),
            "septactl: DEADLINE_EXCEEDED: no answer from septad at h:1 in time (see --timeout): Deadline Exceeded");
}

TEST(ErrorLine, LocalStatus) {
  EXPECT_EQ(ErrorLine(InvalidArgument("bad\nthing")), "septactl: INVALID_ARGUMENT: bad thing");
  EXPECT_EQ(ErrorLine(InvalidField("ttl", "must be positive")),
            "septactl: INVALID_ARGUMENT: ttl: must be positive (field: ttl)");
}

}  // namespace
}  // namespace septa::cli
