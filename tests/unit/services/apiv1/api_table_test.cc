// The table of API v1's RPCs (services/apiv1/api.h): what it refuses to
// load (each naming the RPC or the handler), how a handler is invoked, and
// the (septa.v1.auth) rules both transports check before the use case.
#include <gmock/gmock.h>
#include <google/protobuf/empty.pb.h>
#include <gtest/gtest.h>

#include <stdexcept>

#include "septa/v1/tenant.pb.h"
#include "septa/v1/trust_tier.pb.h"
#include "services/apiv1/api.h"
#include "tests/support/proto_test_pool.h"

namespace septa::apiv1 {
namespace {

using ::testing::HasSubstr;

const google::protobuf::ServiceDescriptor* Service(const std::string& name) {
  return google::protobuf::DescriptorPool::generated_pool()->FindServiceByName("septa.v1." + name);
}

using TierHandler = std::function<Result<v1::TrustTier>(const core::RequestContext&, const v1::GetTrustTierRequest&)>;

// Handlers for TrustTierService: List answers empty, Get as `get` says,
// the writes an empty tier.
Handlers TierHandlers(TierHandler get = [](const core::RequestContext&,
                                           const v1::GetTrustTierRequest& req) -> Result<v1::TrustTier> {
  v1::TrustTier tier;
  tier.set_name(req.name());
  return tier;
}) {
  Handlers handlers;
  handlers.Add<v1::ListTrustTiersRequest>(
      [](const core::RequestContext&, const v1::ListTrustTiersRequest&) -> Result<v1::ListTrustTiersResponse> {
        return v1::ListTrustTiersResponse();
      });
  handlers.Add<v1::GetTrustTierRequest>(std::move(get));
  handlers.Add<v1::CreateTrustTierRequest>(
      [](const core::RequestContext&, const v1::CreateTrustTierRequest&) -> Result<v1::TrustTier> {
        return v1::TrustTier();
      });
  handlers.Add<v1::UpdateTrustTierRequest>(
      [](const core::RequestContext&, const v1::UpdateTrustTierRequest&) -> Result<v1::TrustTier> {
        return v1::TrustTier();
      });
  handlers.Add<v1::DeleteTrustTierRequest>(
      [](const core::RequestContext&, const v1::DeleteTrustTierRequest&) -> Result<google::protobuf::Empty> {
        return google::protobuf::Empty();
      });
  return handlers;
}

std::string LoadError(const std::vector<const google::protobuf::ServiceDescriptor*>& services, Handlers handlers) {
  auto api = Api::Load(services, std::move(handlers));
  return api.ok() ? "loaded" : api.status().message();
}

core::Principal Tenant(const std::string& name, core::Role role) {
  core::Principal p;
  p.tenant = name;
  p.role = role;
  return p;
}

TEST(ApiTable, AnRpcWithoutAHandlerStopsTheLoadNamingIt) {
  EXPECT_THAT(LoadError({Service("TenantService")}, Handlers()),
              HasSubstr("septa.v1.TenantService/CreateTenant: has no handler"));
}

TEST(ApiTable, AHandlerNoRpcTakesOrTwoForOneRpcAreRefused) {
  Handlers extra = TierHandlers();
  extra.Add<v1::GetTenantRequest>(
      [](const core::RequestContext&, const v1::GetTenantRequest&) -> Result<v1::Tenant> { return v1::Tenant(); });
  EXPECT_THAT(LoadError({Service("TrustTierService")}, std::move(extra)),
              HasSubstr("a handler takes septa.v1.GetTenantRequest, which no RPC of the API takes"));

  Handlers twice = TierHandlers();
  twice.Add<v1::ListTrustTiersRequest>(
      [](const core::RequestContext&, const v1::ListTrustTiersRequest&) -> Result<v1::ListTrustTiersResponse> {
        return v1::ListTrustTiersResponse();
      });
  EXPECT_THAT(LoadError({Service("TrustTierService")}, std::move(twice)),
              HasSubstr("two handlers take septa.v1.ListTrustTiersRequest"));
  EXPECT_EQ(LoadError({Service("TrustTierService")}, TierHandlers()), "loaded");
}

TEST(ApiTable, EveryRpcMustSayWhoMayCallItAndTheRuleMustNameRealFields) {
  constexpr std::string_view kHttp = R"([septa.v1.http] { get: "/v1/things/{name}" })";
  auto error = [&](const std::string& auth) {
    test::ProtoTestPool pool({std::string(kHttp) + " " + auth});
    return LoadError({pool.service()}, Handlers());
  };
  EXPECT_THAT(error(""), HasSubstr("t.S/M0: has no (septa.v1.auth) option"));
  EXPECT_THAT(error("[septa.v1.auth] { caller: CALLER_WRITER }"), HasSubstr("names no action"));
  EXPECT_THAT(error(R"([septa.v1.auth] { caller: CALLER_ANY tenant_field: "nope" })"),
              HasSubstr("tenant_field: \"nope\" names no field of t.Req"));
  EXPECT_THAT(error(R"([septa.v1.auth] { caller: CALLER_ANY tenant_field: "tags" })"),
              HasSubstr("\"tags\" must be a singular scalar field"));
  // A good rule gets as far as the handler.
  EXPECT_THAT(error(R"([septa.v1.auth] { caller: CALLER_ANY tenant_field: "thing.name" })"),
              HasSubstr("t.S/M0: has no handler"));
}

TEST(ApiTable, TwoRpcsTakingOneRequestMessageAreRefused) {
  constexpr std::string_view kOptions =
      R"([septa.v1.http] { get: "/v1/things/{name}" } [septa.v1.auth] { caller: CALLER_ANY })";
  test::ProtoTestPool pool({std::string(kOptions), std::string(kOptions)});
  EXPECT_THAT(LoadError({pool.service()}, Handlers()),
              HasSubstr("t.S/M1: takes t.Req as t.S/M0 does: each RPC needs its own request message"));
}

TEST(ApiTable, InvokeRunsTheTypedHandlerAndAnExceptionIsInternal) {
  bool throws = false;
  auto api = Api::Load(
      {Service("TrustTierService")},
      TierHandlers([&](const core::RequestContext& ctx, const v1::GetTrustTierRequest& req) -> Result<v1::TrustTier> {
        if (throws) throw std::runtime_error("boom");
        v1::TrustTier tier;
        tier.set_name(req.name() + " for " + ctx.request_id);
        return tier;
      }));
  ASSERT_TRUE(api.ok()) << api.status().ToString();
  const Rpc& get = (*api)->rpcs().at(1);
  ASSERT_EQ(get.name, "septa.v1.TrustTierService/GetTrustTier");
  EXPECT_EQ(get.http.path, "/v1/trust-tiers/{name}");
  std::unique_ptr<google::protobuf::Message> request = get.NewRequest();
  ASSERT_EQ(request->GetDescriptor(), v1::GetTrustTierRequest::descriptor());
  static_cast<v1::GetTrustTierRequest&>(*request).set_name("shared");
  auto response = get.Invoke(core::RequestContext{{}, "r1"}, *request);
  ASSERT_TRUE(response.ok()) << response.status().ToString();
  EXPECT_EQ(static_cast<const v1::TrustTier&>(**response).name(), "shared for r1");

  throws = true;
  auto thrown = get.Invoke(core::RequestContext{{}, "r2"}, *request);
  EXPECT_EQ(thrown.status().code(), Code::kInternal);
  EXPECT_THAT(thrown.status().message(), HasSubstr("boom"));
  // A request of another type never reaches the typed handler.
  EXPECT_EQ(get.Invoke(core::RequestContext{}, v1::GetTenantRequest()).status().code(), Code::kInternal);
}

TEST(ApiTable, EveryRpcOfTheApiSaysWhoMayCallIt) {
  auto services = ApiServices();
  ASSERT_TRUE(services.ok()) << services.status().ToString();
  int rpcs = 0;
  for (const google::protobuf::ServiceDescriptor* service : *services) {
    for (int m = 0; m < service->method_count(); ++m, ++rpcs) {
      auto rule = LoadAuthRule(*service->method(m));
      EXPECT_TRUE(rule.ok()) << service->method(m)->full_name() << ": " << rule.status().ToString();
    }
  }
  EXPECT_GE(rpcs, 21);
}

// The declared rules of the real API, checked as both transports check them.
TEST(ApiTable, TheRulesRefuseOtherTenantsViewersAndNonAdminsAsTheUseCasesDo) {
  auto rules = [](const google::protobuf::MethodDescriptor* method) {
    auto rule = LoadAuthRule(*method);
    EXPECT_TRUE(rule.ok()) << method->full_name() << ": " << rule.status().ToString();
    return rule.ok() ? *rule : AuthRule{};
  };
  const AuthRule update = rules(Service("TenantService")->FindMethodByName("UpdateTenant"));
  v1::UpdateTenantRequest request;
  request.mutable_tenant()->set_name("acme");
  const core::Principal acme_owner = Tenant("acme", core::Role::kOwner);
  EXPECT_TRUE(CheckTenant(update, acme_owner, request).ok());
  EXPECT_TRUE(CheckCaller(update, acme_owner).ok());

  const Status other = CheckTenant(update, Tenant("globex", core::Role::kOwner), request);
  EXPECT_EQ(other.code(), Code::kNotFound);
  EXPECT_EQ(other.message(), "tenant \"acme\" not found");
  const Status viewer = CheckCaller(update, Tenant("acme", core::Role::kViewer));
  EXPECT_EQ(viewer.code(), Code::kPermissionDenied);
  EXPECT_EQ(viewer.message(), "a viewer may not update tenants");
  core::Principal suspended = acme_owner;
  suspended.suspended = true;
  EXPECT_EQ(CheckCaller(update, suspended).code(), Code::kPermissionDenied);

  const AuthRule create = rules(Service("TenantService")->FindMethodByName("CreateTenant"));
  EXPECT_EQ(CheckCaller(create, acme_owner).message(), "only an admin may create tenants");
  core::Principal admin;
  admin.admin = true;
  admin.role = core::Role::kOwner;
  EXPECT_TRUE(CheckCaller(create, admin).ok());
  admin.role = core::Role::kViewer;
  EXPECT_EQ(CheckCaller(create, admin).message(), "a viewer may not create tenants");

  // A name the client made up is escaped in the refusal.
  request.mutable_tenant()->set_name("a\x01");
  EXPECT_EQ(CheckTenant(update, acme_owner, request).message(), "tenant \"a\\u0001\" not found");
}

}  // namespace
}  // namespace septa::apiv1
