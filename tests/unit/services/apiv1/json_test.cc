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

}  // namespace
}  // namespace septa::apiv1
