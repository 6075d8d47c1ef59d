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

Status Quarter(int n, int* out) {
  SEPTA_ASSIGN_OR_RETURN(const int half, Half(n));
  SEPTA_ASSIGN_OR_RETURN(*out, Half(half));
  return Status::Ok();
}

TEST(Result, AssignOrReturnDeclaresOrAssignsOrReturnsTheError) {
  int out = 0;
  EXPECT_TRUE(Quarter(12, &out).ok());
  EXPECT_EQ(out, 3);
  EXPECT_EQ(Quarter(6, &out).message(), "odd");  // the second step's error
  EXPECT_EQ(out, 3);                             // untouched
  EXPECT_EQ(Quarter(5, &out).message(), "odd");
}

TEST(Status, UpdateKeepsTheFirstError) {
  Status first;
  first.Update(Status::Ok());
  EXPECT_TRUE(first.ok());
  first.Update(NotFound("a"));
  first.Update(Internal("b"));
  first.Update(Status::Ok());
  EXPECT_EQ(first.code(), Code::kNotFound);
  EXPECT_EQ(first.message(), "a");
}

TEST(Status, PredicatesNameTheCodeAndAValueIsNoError) {
  EXPECT_TRUE(IsNotFound(NotFound("x")));
  EXPECT_FALSE(IsNotFound(Aborted("x")));
  EXPECT_TRUE(IsAborted(Aborted("x")));
  EXPECT_TRUE(IsAlreadyExists(AlreadyExists("x")));
  EXPECT_TRUE(IsNotFound(Result<int>(NotFound("x"))));
  EXPECT_FALSE(IsNotFound(Result<int>(7)));
  EXPECT_FALSE(IsNotFound(Status::Ok()));
}

TEST(CodeName, MatchesGrpcSpelling) {
  EXPECT_EQ(CodeName(Code::kFailedPrecondition), "FAILED_PRECONDITION");
  EXPECT_EQ(CodeName(Code::kUnauthenticated), "UNAUTHENTICATED");
}

}  // namespace
}  // namespace septa
