#include "common/status.h"

#include <gtest/gtest.h>

namespace septa {
namespace {

TEST(Status, DefaultIsOk) {
  Status s;
  EXPECT_TRUE(s.ok());
  EXPECT_EQ(s.ToString(), "OK");
}

TEST(Status, InvalidFieldNamesTheField) {
  Status s = InvalidField("trust_tier", "must be one of shared, isolated, dedicated, exclusive");
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  ASSERT_EQ(s.violations().size(), 1u);
  EXPECT_EQ(s.violations()[0].field, "trust_tier");
  EXPECT_EQ(s.ToString(), "INVALID_ARGUMENT: trust_tier: must be one of shared, isolated, dedicated, exclusive");
}

TEST(Status, FieldErrorKeepsItsCodeAndNamesTheField) {
  Status s = FieldError(Code::kFailedPrecondition, "capacity.gpus", "the tier allows capacity.mig only");
  EXPECT_EQ(s.code(), Code::kFailedPrecondition);
  ASSERT_EQ(s.violations().size(), 1u);
  EXPECT_EQ(s.violations()[0].field, "capacity.gpus");
  EXPECT_EQ(s.message(), "capacity.gpus: the tier allows capacity.mig only");
}

Result<int> Half(int x) {
  if (x % 2) return InvalidArgument("odd");
  return x / 2;
}

Status UsesMacro(int x, int* out) {
  auto r = Half(x);
  SEPTA_RETURN_IF_ERROR(r);
  *out = *r;
  return Status::Ok();
}

TEST(Result, HoldsValueOrStatus) {
  EXPECT_EQ(*Half(8), 4);
  EXPECT_FALSE(Half(3).ok());
  EXPECT_EQ(Half(3).status().code(), Code::kInvalidArgument);
  int out = 0;
  EXPECT_TRUE(UsesMacro(6, &out).ok());
  EXPECT_EQ(out, 3);
  EXPECT_EQ(UsesMacro(5, &out).message(), "odd");
}

// Before issue 9 this was only an assert: a release build held an OK status and
// value() threw std::bad_variant_access; now every build holds INTERNAL.
TEST(Result, FromOkStatusIsInternalError) {
  Result<int> r = Status::Ok();
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Code::kInternal);
  EXPECT_NE(r.status().message().find("OK status"), std::string::npos);
}

TEST(CodeName, MatchesGrpcSpelling) {
  EXPECT_EQ(CodeName(Code::kFailedPrecondition), "FAILED_PRECONDITION");
  EXPECT_EQ(CodeName(Code::kUnauthenticated), "UNAUTHENTICATED");
}

}  // namespace
}  // namespace septa
