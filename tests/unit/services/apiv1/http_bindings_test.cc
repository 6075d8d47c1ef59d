#include "services/apiv1/http_bindings.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>

#include "septa/api_files.h"

namespace septa::apiv1 {
namespace {

std::map<std::string, HttpBinding> ByRpc() {
  auto bindings = ApiHttpBindings();
  EXPECT_TRUE(bindings.ok()) << bindings.status().ToString();
  std::map<std::string, HttpBinding> out;
  if (bindings.ok()) {
    for (const HttpBinding& b : *bindings) out[std::string(b.method->full_name())] = b;
  }
  return out;
}

std::vector<std::string> Names(const std::vector<const google::protobuf::FieldDescriptor*>& fields) {
  std::vector<std::string> out;
  for (const auto* f : fields) out.emplace_back(f->name());
  return out;
}

TEST(HttpBindings, EveryRpcOfEveryServiceFileIsBound) {
  int rpcs = 0;
  for (const char* name : api::kServiceProtoFiles) {
    const auto* file = google::protobuf::DescriptorPool::generated_pool()->FindFileByName(name);
    ASSERT_NE(file, nullptr) << name << " is not linked";
    for (int s = 0; s < file->service_count(); ++s) rpcs += file->service(s)->method_count();
  }
  EXPECT_EQ(ByRpc().size(), static_cast<std::size_t>(rpcs));
  EXPECT_GE(rpcs, 16);  // tenants 5, tiers 2, tokens 3, vclusters 5, inventory 1
}

TEST(HttpBindings, ReadsPathBodyHeadersAndQuery) {
  auto rpcs = ByRpc();
  const HttpBinding& update = rpcs.at("septa.v1.TenantService.UpdateTenant");
  EXPECT_EQ(update.verb, "PATCH");
  EXPECT_EQ(update.path, "/v1/tenants/{tenant.name}");
  ASSERT_EQ(update.path_variables.size(), 1u);
  EXPECT_EQ(update.path_variables[0].field.leaf().full_name(), "septa.v1.Tenant.name");
  ASSERT_NE(update.body_field, nullptr);
  EXPECT_EQ(update.body_field->name(), "tenant");
  ASSERT_EQ(update.headers.size(), 1u);
  EXPECT_EQ(update.headers[0].header, "If-Match");
  EXPECT_EQ(update.headers[0].field.leaf().full_name(), "septa.v1.Tenant.etag");
  EXPECT_THAT(Names(update.query), ::testing::ElementsAre("update_mask"));
  EXPECT_EQ(update.success_status, 200);

  const HttpBinding& list = rpcs.at("septa.v1.TenantService.ListTenants");
  EXPECT_FALSE(list.has_body);
  EXPECT_THAT(Names(list.query), ::testing::ElementsAre("page_size", "page_token", "filter"));

  const HttpBinding& create = rpcs.at("septa.v1.VirtualClusterService.CreateVirtualCluster");
  EXPECT_EQ(create.success_status, 201);
  // tenant: path, virtual_cluster: body, idempotency_key: header
  EXPECT_THAT(Names(create.query), ::testing::ElementsAre("validate_only"));

  const HttpBinding& token = rpcs.at("septa.v1.TokenService.CreateToken");
  EXPECT_TRUE(token.has_body);
  EXPECT_EQ(token.body_field, nullptr);  // body "*": the whole request
  EXPECT_TRUE(token.query.empty());

  EXPECT_EQ(rpcs.at("septa.v1.TenantService.DeleteTenant").success_status, 204);
  EXPECT_EQ(rpcs.at("septa.v1.VirtualClusterService.DeleteVirtualCluster").success_status, 200);
}

TEST(HttpBindings, NamesTheFileThatIsNotThere) {
  auto bindings = LoadHttpBindings(*google::protobuf::DescriptorPool::generated_pool(), {"septa/v1/no_such.proto"});
  ASSERT_FALSE(bindings.ok());
  EXPECT_THAT(bindings.status().message(), ::testing::HasSubstr("septa/v1/no_such.proto"));
}

TEST(HttpBindings, PathShapeErasesVariableNames) {
  EXPECT_EQ(PathShape("/v1/tenants/{tenant.name}"), "/v1/tenants/{}");
  EXPECT_EQ(PathShape("/v1/tenants/{tenant}/vclusters/{name}"), "/v1/tenants/{}/vclusters/{}");
  EXPECT_EQ(PathShape("/v1/trust-tiers"), "/v1/trust-tiers");
}

}  // namespace
}  // namespace septa::apiv1
