// Tenant quotas end to end: ONE table of steps, run against REST
// (rest_test.cc) and against gRPC (grpc_test.cc), each on a fresh septad.
// An admin sets tenant q's quota, bad values are refused naming the field,
// virtual clusters are created and resized up to the quota and refused past
// it (RESOURCE_EXHAUSTED naming "tenant.quota.<field>"), and a quota lowered
// below what q holds takes nothing away. Each run then checks the rows:
// only what the accepted steps asked for is held.
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "tenancy/reservation.h"

namespace septa::test {

struct QuotaStep {
  std::string what;
  std::string method, target, body;  // the REST call
  std::string rpc, request;          // the gRPC call ("Service/Method", proto JSON); empty: REST only
  int status;                        // HTTP; the gRPC run expects its canonical code
  std::string field;                 // the first violation's field, when refused
};

// Tenant q (dedicated) on two nodes of four whole A100s; every call by the admin.
inline std::vector<QuotaStep> TenantQuotaSteps() {
  auto quota = [](const std::string& what, const std::string& rest_body, const std::string& grpc_quota,
                  const std::string& mask, int status, const std::string& field) {
    return QuotaStep{what,
                     "PATCH",
                     "/v1/tenants/q?update_mask=" + mask,
                     rest_body,
                     "TenantService/UpdateTenant",
                     R"({"tenant":{"name":"q","quota":)" + grpc_quota + R"(},"updateMask":")" + mask + R"("})",
                     status,
                     field};
  };
  auto create = [](const std::string& name, int gpus, int status, const std::string& field) {
    const std::string vc = R"({"name":")" + name + R"(","capacity":{"gpus":{"count":)" + std::to_string(gpus) + "}}}";
    return QuotaStep{"create " + name + " with " + std::to_string(gpus) + " GPUs",
                     "POST",
                     "/v1/tenants/q/vclusters",
                     vc,
                     "VirtualClusterService/CreateVirtualCluster",
                     R"({"tenant":"q","virtual_cluster":)" + vc + "}",
                     status,
                     field};
  };
  auto resize = [](const std::string& name, int gpus, int status, const std::string& field) {
    const std::string capacity = R"({"gpus":{"count":)" + std::to_string(gpus) + "}}";
    return QuotaStep{"resize " + name + " to " + std::to_string(gpus) + " GPUs",
                     "PATCH",
                     "/v1/tenants/q/vclusters/" + name,
                     R"({"capacity":)" + capacity + "}",
                     "VirtualClusterService/UpdateVirtualCluster",
                     R"({"virtual_cluster":{"tenant":"q","name":")" + name + R"(","capacity":)" + capacity +
                         R"(},"updateMask":"capacity"})",
                     status,
                     field};
  };
  auto rest_only = [](QuotaStep step) {
    step.rpc.clear();  // a value the gRPC client cannot even encode
    return step;
  };
  return {
      quota("admin sets the quota", R"({"quota":{"gpu_milli":3000,"vclusters":3}})",
            R"({"gpuMilli":3000,"vclusters":3})", "quota", 200, ""),
      quota("negative", R"({"quota":{"gpu_milli":-1}})", R"({"gpuMilli":-1})", "quota.gpu_milli", 400,
            "quota.gpu_milli"),
      quota("above the bound", R"({"quota":{"pods":150001}})", R"({"pods":150001})", "quota.pods", 400, "quota.pods"),
      rest_only(quota("beyond int32", R"({"quota":{"gpu_milli":4294967296}})", "", "quota.gpu_milli", 400,
                      "quota.gpu_milli")),
      rest_only(
          quota("wrong type", R"({"quota":{"vclusters":"three"}})", "", "quota.vclusters", 400, "quota.vclusters")),
      quota("unknown member", R"({"quota":{"gpu_milli":1}})", R"({"gpuMilli":1})", "quota.gpus", 400, "update_mask"),
      create("a", 2, 201, ""),
      create("b", 2, 429, "tenant.quota.gpu_milli"),  // 2 of 3 GPU-equivalents in use
      create("b", 1, 201, ""),                        // exactly fills the quota
      create("c", 1, 429, "tenant.quota.gpu_milli"),
      resize("a", 3, 429, "tenant.quota.gpu_milli"),
      quota("admin lowers it below what q holds", R"({"quota":{"gpu_milli":1000}})", R"({"gpuMilli":1000})",
            "quota.gpu_milli", 200, ""),
      resize("a", 1, 200, ""),  // shrinking is never refused, even over the quota
      resize("b", 2, 429, "tenant.quota.gpu_milli"),
      quota("admin replaces it: GPUs unlimited, 2 virtual clusters", R"({"quota":{"vclusters":2}})",
            R"({"vclusters":2})", "quota", 200, ""),
      create("c", 1, 429, "tenant.quota.vclusters"),
      resize("b", 3, 200, ""),
  };
}

// After the steps: q/a holds 1 GPU and q/b 3; nothing refused was written.
inline void ExpectQuotaTableRows(const std::vector<tenancy::Reservation>& rows) {
  std::map<std::string, std::size_t> gpus;
  for (const auto& r : rows) {
    if (r.tenant == "q") gpus[r.vcluster] = r.gpus.size();
  }
  EXPECT_EQ(gpus, (std::map<std::string, std::size_t>{{"a", 1}, {"b", 3}}));
}

}  // namespace septa::test
