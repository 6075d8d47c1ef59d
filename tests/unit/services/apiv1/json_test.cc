// ParseJsonBody on the bodies the fuzzer (fuzz/api_json_fuzzer.cc) found
// mishandled: each is a client's mistake, answered with an error value.
#include <gtest/gtest.h>

#include "septa/v1/tenant.pb.h"
#include "services/apiv1/json.h"

namespace septa::apiv1 {
namespace {

// fuzz/corpus/api_json/bad_number: nlohmann throws out_of_range for a number
// that overflows a double; it escaped ParseJsonBody (a 500, or a crash).
TEST(ParseJsonBody, NumberThatOverflowsIsInvalidArgument) {
  for (const char* number : {"1e999", "1e400", "-1e309"}) {
    v1::Tenant tenant;
    const std::string body = std::string(R"({"name":"x","display_name": )") + number + "}";
    const auto parsed = ParseJsonBody(body, tenant);
    ASSERT_FALSE(parsed.ok()) << number;
    EXPECT_EQ(parsed.status().code(), Code::kInvalidArgument) << number;
  }
}

// The REST API's bound (32 levels) through the shared reader
// (common/documents.h): at the bound the body reaches protobuf, one past it
// is refused by name.
TEST(ParseJsonBody, NestingUpToThirtyTwoLevels) {
  const auto nested = [](int depth) {  // {"labels": [[...]]}: depth levels with the body itself
    return R"({"name":"x","labels":)" + std::string(depth - 1, '[') + std::string(depth - 1, ']') + "}";
  };
  v1::Tenant tenant;
  const auto at = ParseJsonBody(nested(32), tenant);
  ASSERT_FALSE(at.ok());  // protobuf's refusal: labels is a map, not an array
  EXPECT_EQ(at.status().message().find("nests deeper"), std::string::npos) << at.status().message();
  const auto past = ParseJsonBody(nested(33), tenant);
  ASSERT_FALSE(past.ok());
  EXPECT_EQ(past.status().code(), Code::kInvalidArgument);
  EXPECT_EQ(past.status().message(), "request body nests deeper than 32 levels");
}

}  // namespace
}  // namespace septa::apiv1
