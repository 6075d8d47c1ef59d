// ApiResult (api_error.h): a value or an ApiError, shaped like septa::Result,
// and the KUBESIM_RETURN_IF_ERROR / KUBESIM_ASSIGN_OR_RETURN macros.
#include <gtest/gtest.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <variant>

#include "services/kubesim/api_error.h"

namespace septa::kubesim {
namespace {

ApiResult<int> HalfOfEven(int x) {
  if (x % 2) return BadRequestError("odd: " + std::to_string(x));
  return x / 2;
}

ApiResult<std::unique_ptr<int>> BoxedHalf(int x) {
  if (x % 2) return BadRequestError("odd");
  return std::make_unique<int>(x / 2);
}

TEST(kubesimApiResult, HoldsTheValue) {
  ApiResult<int> r = HalfOfEven(8);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(static_cast<bool>(r));
  EXPECT_EQ(*r, 4);
  EXPECT_EQ(r.value(), 4);
  *r = 5;
  EXPECT_EQ(*r, 5);
  EXPECT_THROW((void)r.error(), std::bad_variant_access);  // defined, never undefined behaviour

  const ApiResult<std::string> s = std::string("web");
  EXPECT_EQ(s->size(), 3u);
}

TEST(kubesimApiResult, HoldsTheError) {
  const ApiResult<int> r = HalfOfEven(3);
  ASSERT_FALSE(r.ok());
  EXPECT_FALSE(static_cast<bool>(r));
  EXPECT_EQ(r.error().code, 400);
  EXPECT_EQ(r.error().reason, "BadRequest");
  EXPECT_EQ(r.error().message, "odd: 3");
  EXPECT_THROW((void)r.value(), std::bad_variant_access);
  EXPECT_THROW((void)*r, std::bad_variant_access);

  // A json can be built from nearly anything; an ApiError is still an error.
  const ApiResult<nlohmann::json> j = NotFoundError("pods", "", "web");
  ASSERT_FALSE(j.ok());
  EXPECT_EQ(j.error().code, 404);
  EXPECT_EQ(j.error().name, "web");
  const ApiResult<nlohmann::json> object = nlohmann::json{{"kind", "Pod"}};
  ASSERT_TRUE(object.ok());
  EXPECT_EQ((*object)["kind"], "Pod");
}

TEST(kubesimApiResult, MoveOnlyValue) {
  ApiResult<std::unique_ptr<int>> r = BoxedHalf(10);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(**r, 5);
  std::unique_ptr<int> taken = *std::move(r);
  ASSERT_NE(taken, nullptr);
  EXPECT_EQ(*taken, 5);

  ApiResult<std::unique_ptr<int>> failed = BoxedHalf(1);
  ASSERT_FALSE(failed.ok());
  const ApiError error = std::move(failed).error();
  EXPECT_EQ(error.message, "odd");
}

// The error crosses to another value type; the checked result, an lvalue,
// keeps its own.
ApiResult<std::string> DescribeHalf(const ApiResult<int>& half) {
  KUBESIM_RETURN_IF_ERROR(half);
  return "half is " + std::to_string(*half);
}

TEST(kubesimApiResult, ReturnIfErrorReturnsACopyOfTheError) {
  EXPECT_EQ(*DescribeHalf(HalfOfEven(6)), "half is 3");
  const ApiResult<int> odd = HalfOfEven(7);
  const ApiResult<std::string> described = DescribeHalf(odd);
  ASSERT_FALSE(described.ok());
  EXPECT_EQ(described.error().message, "odd: 7");
  EXPECT_EQ(odd.error().message, "odd: 7");
}

ApiResult<std::string> QuarterOfInto(int n, int* out) {
  KUBESIM_ASSIGN_OR_RETURN(const int half, HalfOfEven(n));
  KUBESIM_ASSIGN_OR_RETURN(*out, HalfOfEven(half));
  return std::to_string(*out);
}

ApiResult<int> UnboxedQuarter(int n) {
  KUBESIM_ASSIGN_OR_RETURN(std::unique_ptr<int> half, BoxedHalf(n));
  KUBESIM_ASSIGN_OR_RETURN(half, BoxedHalf(*half));
  return *half;
}

TEST(kubesimApiResult, AssignOrReturnDeclaresOrAssignsOrReturnsTheError) {
  int out = 0;
  EXPECT_EQ(*QuarterOfInto(12, &out), "3");
  EXPECT_EQ(out, 3);
  EXPECT_EQ(QuarterOfInto(6, &out).error().message, "odd: 3");  // the second step's error
  EXPECT_EQ(out, 3);                                            // untouched
  EXPECT_EQ(QuarterOfInto(5, &out).error().message, "odd: 5");

  EXPECT_EQ(*UnboxedQuarter(20), 5);
  EXPECT_EQ(UnboxedQuarter(6).error().code, 400);
  EXPECT_EQ(UnboxedQuarter(3).error().reason, "BadRequest");
}

}  // namespace
}  // namespace septa::kubesim
