// A virtual cluster's API limits end to end: ONE table of steps, run against
// REST (rest_test.cc) and against gRPC (grpc_test.cc), each on a fresh
// septad. Tenant al (isolated) has virtual cluster v, created by its owner;
// only an admin overrides the tier's limits (the owner gets 403 naming
// nothing it may change), bad values are refused naming the field, one
// member may be set alone, and the whole of it cleared.
#pragma once

#include <string>
#include <vector>

namespace septa::test {

struct ApiLimitsStep {
  std::string what;
  bool admin;                        // else al's owner token
  std::string method, target, body;  // the REST call
  std::string rpc, request;          // the gRPC call ("Service/Method", proto JSON); empty: REST only
  int status;                        // HTTP; the gRPC run expects its canonical code
  std::string field;                 // the first violation's field, when refused
  std::string api_limits;            // after a success: GET's api_limits (REST JSON), "" for none
};

inline std::vector<ApiLimitsStep> ApiLimitsSteps() {
  auto patch = [](const std::string& what, bool admin, const std::string& limits, const std::string& grpc_limits,
                  const std::string& mask, int status, const std::string& field, const std::string& after) {
    return ApiLimitsStep{what,
                         admin,
                         "PATCH",
                         "/v1/tenants/al/vclusters/v?update_mask=" + mask,
                         R"({"api_limits":)" + limits + "}",
                         "VirtualClusterService/UpdateVirtualCluster",
                         R"({"virtual_cluster":{"tenant":"al","name":"v","apiLimits":)" + grpc_limits +
                             R"(},"updateMask":")" + mask + R"("})",
                         status,
                         field,
                         after};
  };
  auto create = [](const std::string& what, const std::string& name, const std::string& extra, int status) {
    const std::string vc =
        R"({"name":")" + name + R"(","capacity":{"mig":[{"profile":"1g.10gb","count":1}]})" + extra + "}";
    return ApiLimitsStep{what,
                         false,
                         "POST",
                         "/v1/tenants/al/vclusters",
                         vc,
                         "VirtualClusterService/CreateVirtualCluster",
                         R"({"tenant":"al","virtual_cluster":)" + vc + "}",
                         status,
                         "",
                         ""};
  };
  auto rest_only = [](ApiLimitsStep step) {
    step.rpc.clear();  // a value the gRPC client cannot even encode
    return step;
  };
  return {
      create("the owner cannot set them on create", "w", R"(,"api_limits":{"watches":1000})", 403),
      create("the owner creates v, the tier's limits apply", "v", "", 201),
      patch("the owner cannot raise them", false, R"({"watches":1000})", R"({"watches":1000})", "api_limits.watches",
            403, "", ""),
      patch("an admin overrides watches", true, R"({"watches":5})", R"({"watches":5})", "api_limits.watches", 200, "",
            R"({"watches":5})"),
      patch("negative", true, R"({"objects":-1})", R"({"objects":-1})", "api_limits.objects", 400, "api_limits.objects",
            ""),
      patch("above the bound", true, R"({"requests_in_flight":1000001})", R"({"requestsInFlight":1000001})",
            "api_limits.requests_in_flight", 400, "api_limits.requests_in_flight", ""),
      rest_only(patch("beyond int32", true, R"({"objects":4294967296})", "", "api_limits.objects", 400,
                      "api_limits.objects", "")),
      patch("bytes beyond int32, one member alone", true, R"({"object_bytes":8589934592})",
            R"({"objectBytes":"8589934592"})", "api_limits.object_bytes", 200, "",
            R"({"object_bytes":"8589934592","watches":5})"),
      patch("0 allows none", true, R"({"objects":0})", R"({"objects":0})", "api_limits.objects", 200, "",
            R"({"object_bytes":"8589934592","objects":0,"watches":5})"),
      patch("unknown member", true, R"({"objects":1})", R"({"objects":1})", "api_limits.pods", 400, "update_mask", ""),
      patch("the whole of it replaced: absent members are the tier's again", true, R"({"watches":7})",
            R"({"watches":7})", "api_limits", 200, "", R"({"watches":7})"),
      patch("cleared", true, "{}", "{}", "api_limits", 200, "", ""),
  };
}

}  // namespace septa::test
