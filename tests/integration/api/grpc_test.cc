// gRPC API v1 over a real socket against a real PostgreSQL: the same
// semantics as REST, errors as canonical codes with details.
#include <google/protobuf/util/json_util.h>
#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>

#include <set>

#include "google/rpc/error_details.pb.h"
#include "google/rpc/status.pb.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "septa/v1/inventory.grpc.pb.h"
#include "septa/v1/tenant.grpc.pb.h"
#include "septa/v1/token.grpc.pb.h"
#include "septa/v1/trust_tier.grpc.pb.h"
#include "septa/v1/vcluster.grpc.pb.h"
#include "services/apiv1/http_bindings.h"
#include "tests/integration/api/api_fixture.h"
#include "tests/integration/api/api_limits_table.h"
#include "tests/integration/api/authorization_table.h"
#include "tests/integration/api/tenant_quota_table.h"

namespace septa::test {
namespace {

class GrpcTest : public ApiTest {
 protected:
  void SetUp() override {
    ApiTest::SetUp();
    if (HasFatalFailure()) return;
    channel_ =
        grpc::CreateChannel("127.0.0.1:" + std::to_string(app_->grpc_port()), grpc::InsecureChannelCredentials());
    tenants_ = v1::TenantService::NewStub(channel_);
    tiers_ = v1::TrustTierService::NewStub(channel_);
    tokens_ = v1::TokenService::NewStub(channel_);
    vclusters_ = v1::VirtualClusterService::NewStub(channel_);
    inventory_ = v1::InventoryService::NewStub(channel_);
  }

  std::unique_ptr<grpc::ClientContext> Ctx(const std::string& token) {
    auto ctx = std::make_unique<grpc::ClientContext>();
    if (!token.empty()) ctx->AddMetadata("authorization", "Bearer " + token);
    ctx->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    return ctx;
  }

  static std::vector<google::rpc::BadRequest::FieldViolation> Violations(const grpc::Status& st) {
    google::rpc::Status details;
    EXPECT_TRUE(details.ParseFromString(st.error_details()));
    std::vector<google::rpc::BadRequest::FieldViolation> out;
    for (const auto& any : details.details()) {
      google::rpc::BadRequest br;
      if (any.UnpackTo(&br)) out.assign(br.field_violations().begin(), br.field_violations().end());
    }
    return out;
  }

  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::TenantService::Stub> tenants_;
  std::unique_ptr<v1::TrustTierService::Stub> tiers_;
  std::unique_ptr<v1::TokenService::Stub> tokens_;
  std::unique_ptr<v1::VirtualClusterService::Stub> vclusters_;
  std::unique_ptr<v1::InventoryService::Stub> inventory_;
};

// A token is read after its scheme on both transports (core::BearerToken):
// sent bare it is no token at all, as over REST.
TEST_F(GrpcTest, ATokenIsReadAfterItsSchemeAsOverRest) {
  for (const auto& [header, code] :
       std::vector<std::pair<std::string, grpc::StatusCode>>{{"Bearer " + admin_, grpc::StatusCode::OK},
                                                             {"bearer " + admin_, grpc::StatusCode::OK},
                                                             {admin_, grpc::StatusCode::UNAUTHENTICATED},
                                                             {"Basic " + admin_, grpc::StatusCode::UNAUTHENTICATED}}) {
    grpc::ClientContext ctx;
    ctx.AddMetadata("authorization", header);
    v1::ListTrustTiersResponse tiers;
    EXPECT_EQ(tiers_->ListTrustTiers(&ctx, v1::ListTrustTiersRequest(), &tiers).error_code(), code)
        << header.substr(0, 7);
    const auto rest = Call("", "GET", "/v1/trust-tiers", "", {{"Authorization", header}});
    EXPECT_EQ(rest.status, code == grpc::StatusCode::OK ? 200 : 401) << header.substr(0, 7);
  }
}

TEST_F(GrpcTest, TenantLifecycle) {
  v1::CreateTenantRequest create;
  create.mutable_tenant()->set_name("acme");
  create.mutable_tenant()->set_trust_tier("dedicated");
  (*create.mutable_tenant()->mutable_labels())["team"] = "ml";
  v1::Tenant created;
  auto ctx = Ctx(admin_);
  ctx->AddMetadata("x-request-id", "grpc-trace-1");
  ASSERT_TRUE(tenants_->CreateTenant(ctx.get(), create, &created).ok());
  EXPECT_EQ(created.etag(), "1");
  EXPECT_EQ(ctx->GetServerInitialMetadata().find("x-request-id")->second, "grpc-trace-1");

  // REST sees exactly what gRPC wrote: one schema, two transports.
  auto rest = Call(admin_, "GET", "/v1/tenants/acme");
  EXPECT_EQ(nlohmann::json::parse(rest.body)["trust_tier"], "dedicated");

  v1::UpdateTenantRequest update;
  update.mutable_tenant()->set_name("acme");
  update.mutable_tenant()->set_display_name("Acme");
  update.mutable_tenant()->set_etag("1");
  update.mutable_update_mask()->add_paths("display_name");
  v1::Tenant updated;
  ASSERT_TRUE(tenants_->UpdateTenant(Ctx(admin_).get(), update, &updated).ok());
  EXPECT_EQ(updated.display_name(), "Acme");
  EXPECT_EQ(updated.labels().at("team"), "ml");
  EXPECT_EQ(updated.etag(), "2");

  auto stale = tenants_->UpdateTenant(Ctx(admin_).get(), update, &updated);
  EXPECT_EQ(stale.error_code(), grpc::StatusCode::FAILED_PRECONDITION);

  v1::ListTenantsRequest list;
  list.set_filter("labels.team=ml");
  v1::ListTenantsResponse listed;
  ASSERT_TRUE(tenants_->ListTenants(Ctx(admin_).get(), list, &listed).ok());
  ASSERT_EQ(listed.tenants_size(), 1);

  v1::DeleteTenantRequest del;
  del.set_name("acme");
  google::protobuf::Empty empty;
  ASSERT_TRUE(tenants_->DeleteTenant(Ctx(admin_).get(), del, &empty).ok());
  v1::GetTenantRequest get;
  get.set_name("acme");
  v1::Tenant gone;
  EXPECT_EQ(tenants_->GetTenant(Ctx(admin_).get(), get, &gone).error_code(), grpc::StatusCode::NOT_FOUND);
}

TEST_F(GrpcTest, ErrorsCarryCodesAndFieldViolations) {
  v1::CreateTenantRequest create;
  create.mutable_tenant()->set_name("Bad_Name");
  create.mutable_tenant()->set_trust_tier("shared");
  v1::Tenant out;
  auto st = tenants_->CreateTenant(Ctx(admin_).get(), create, &out);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  auto violations = Violations(st);
  ASSERT_EQ(violations.size(), 1u);
  EXPECT_EQ(violations[0].field(), "name");

  create.mutable_tenant()->set_name("ok");
  create.mutable_tenant()->set_trust_tier("gold");
  st = tenants_->CreateTenant(Ctx(admin_).get(), create, &out);
  ASSERT_EQ(Violations(st).size(), 1u);
  EXPECT_EQ(Violations(st)[0].field(), "trust_tier");

  EXPECT_EQ(tenants_->CreateTenant(Ctx("").get(), create, &out).error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(tenants_->CreateTenant(Ctx("septa_nonsense").get(), create, &out).error_code(),
            grpc::StatusCode::UNAUTHENTICATED);

  create.mutable_tenant()->set_trust_tier("shared");
  create.set_idempotency_key("k");
  ASSERT_TRUE(tenants_->CreateTenant(Ctx(admin_).get(), create, &out).ok());
  ASSERT_TRUE(tenants_->CreateTenant(Ctx(admin_).get(), create, &out).ok());  // replay
  create.mutable_tenant()->set_trust_tier("isolated");
  EXPECT_EQ(tenants_->CreateTenant(Ctx(admin_).get(), create, &out).error_code(), grpc::StatusCode::ALREADY_EXISTS);
}

// The canonical gRPC code of an HTTP status of authorization_table.h.
grpc::StatusCode GrpcCodeOf(int http_status) {
  switch (http_status) {
    case 200:
    case 201:
    case 204: return grpc::StatusCode::OK;
    case 401: return grpc::StatusCode::UNAUTHENTICATED;
    case 403: return grpc::StatusCode::PERMISSION_DENIED;
    case 404: return grpc::StatusCode::NOT_FOUND;
    case 409: return grpc::StatusCode::ALREADY_EXISTS;
    case 400: return grpc::StatusCode::INVALID_ARGUMENT;
    case 412: return grpc::StatusCode::FAILED_PRECONDITION;
    case 429: return grpc::StatusCode::RESOURCE_EXHAUSTED;
  }
  ADD_FAILURE() << "no gRPC code for HTTP " << http_status;
  return grpc::StatusCode::UNKNOWN;
}

class GrpcAuthorizationTest : public AuthorizationTableTest<GrpcTest> {
 protected:
  // Calls the table's "Service/Method" of septa.v1 with its proto JSON
  // request, by its descriptor: whatever RPC the table names, no list here.
  grpc::Status Invoke(const std::string& rpc, const std::string& request, const std::string& token) {
    const std::string full_name = "septa.v1." + rpc.substr(0, rpc.find('/')) + "." + rpc.substr(rpc.find('/') + 1);
    const google::protobuf::MethodDescriptor* method =
        google::protobuf::DescriptorPool::generated_pool()->FindMethodByName(full_name);
    if (method == nullptr) {
      ADD_FAILURE() << "the table names an unknown rpc " << rpc;
      return grpc::Status(grpc::StatusCode::UNIMPLEMENTED, rpc);
    }
    std::unique_ptr<google::protobuf::Message> message(
        google::protobuf::MessageFactory::generated_factory()->GetPrototype(method->input_type())->New());
    const auto parsed = google::protobuf::util::JsonStringToMessage(request, message.get());
    EXPECT_TRUE(parsed.ok()) << request << ": " << parsed.ToString();
    const std::string bytes = message->SerializeAsString();
    grpc::Slice slice(bytes);
    grpc::ByteBuffer sent(&slice, 1);
    grpc::ByteBuffer received;
    // On a completion queue this thread drains, so that the reply is
    // written in this thread: grpc++'s callback API completes on its own
    // threads, which ThreadSanitizer (grpc itself uninstrumented) reports.
    grpc::GenericStub stub(channel_);
    grpc::CompletionQueue cq;
    auto ctx = Ctx(token);
    auto call =
        stub.PrepareUnaryCall(ctx.get(), "/" + method->service()->full_name() + "/" + method->name(), sent, &cq);
    call->StartCall();
    grpc::Status status;
    call->Finish(&received, &status, &status);
    void* tag = nullptr;
    bool ok = false;
    EXPECT_TRUE(cq.Next(&tag, &ok) && tag == &status && ok) << rpc;
    cq.Shutdown();
    while (cq.Next(&tag, &ok)) {
    }
    return status;
  }
};

// A new RPC cannot land without saying who may call it: the table has a
// row for each RPC of the API (http_bindings.h ApiServices).
TEST(AuthorizationTable, HasARowForEveryRpcOfTheApi) {
  std::set<std::string> rows;
  for (const auto& row : AuthorizationTable()) rows.insert(row.rpc);
  auto services = apiv1::ApiServices();
  ASSERT_TRUE(services.ok()) << services.status().ToString();
  for (const google::protobuf::ServiceDescriptor* service : *services) {
    for (int i = 0; i < service->method_count(); ++i) {
      const std::string rpc = service->name() + "/" + service->method(i)->name();
      EXPECT_TRUE(rows.count(rpc)) << rpc << " has no row in authorization_table.h";
    }
  }
}

// authorization_table.h, over gRPC: the same rows and callers as REST.
TEST_F(GrpcAuthorizationTest, AuthorizationMatchesRest) {
  SetUpSubjects();
  for (const auto& row : AuthorizationTable()) {
    const std::string request = WithIds(row.request, ids_);
    for (const auto& [who, expected] : CallersInOrder()) {
      auto st = Invoke(row.rpc, request, bearer_.at(who));
      EXPECT_EQ(st.error_code(), GrpcCodeOf(row.*expected))
          << who << " " << row.rpc << " " << request << " (REST " << row.method << " " << row.target
          << "): " << st.error_message();
    }
  }
}

// api_limits_table.h over gRPC: the same steps as REST.
class GrpcApiLimitsTest : public GrpcAuthorizationTest {};

TEST_F(GrpcApiLimitsTest, ApiLimitsAreTheTiersUnlessAnAdminOverridesThem) {
  v1::GetTrustTierRequest tier_request;
  tier_request.set_name("dedicated");
  v1::TrustTier dedicated;
  ASSERT_TRUE(tiers_->GetTrustTier(Ctx(admin_).get(), tier_request, &dedicated).ok());
  EXPECT_EQ(dedicated.api_limits().objects(), 20000);
  EXPECT_EQ(dedicated.api_limits().object_bytes(), 256 << 20);
  EXPECT_EQ(dedicated.api_limits().watches(), 200);
  EXPECT_EQ(dedicated.api_limits().requests_in_flight(), 64);
  CreateTenant("al", "isolated");
  PutNodes({MigNode("h100-0", 2)});
  const std::string owner = CreateToken("tenant:al", "owner");
  v1::GetVirtualClusterRequest get;
  get.set_tenant("al");
  get.set_name("v");
  for (const auto& step : ApiLimitsSteps()) {
    if (step.rpc.empty()) continue;
    const grpc::Status st = Invoke(step.rpc, step.request, step.admin ? admin_ : owner);
    EXPECT_EQ(st.error_code(), GrpcCodeOf(step.status)) << step.what << ": " << st.error_message();
    if (!step.field.empty()) {
      const auto violations = Violations(st);
      ASSERT_FALSE(violations.empty()) << step.what << ": " << st.error_message();
      EXPECT_EQ(violations[0].field(), step.field) << step.what << ": " << st.error_message();
    }
    if (!st.ok() || step.method != "PATCH") continue;
    v1::VirtualCluster got;
    ASSERT_TRUE(vclusters_->GetVirtualCluster(Ctx(owner).get(), get, &got).ok());
    v1::ApiLimits want;
    if (!step.api_limits.empty()) {
      ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(step.api_limits, &want).ok()) << step.api_limits;
    }
    EXPECT_EQ(got.api_limits().SerializeAsString(), want.SerializeAsString()) << step.what;
  }
}

// tenant_quota_table.h over gRPC: the same steps as REST.
class GrpcTenantQuotaTest : public GrpcAuthorizationTest {};

TEST_F(GrpcTenantQuotaTest, TenantQuotaIsEnforcedAndBreachesNameTheQuota) {
  CreateTenant("q", "dedicated");
  PutNodes({WholeGpuNode("a100-0", 4), WholeGpuNode("a100-1", 4)});
  for (const auto& step : TenantQuotaSteps()) {
    if (step.rpc.empty()) continue;
    const grpc::Status st = Invoke(step.rpc, step.request, admin_);
    EXPECT_EQ(st.error_code(), GrpcCodeOf(step.status)) << step.what << ": " << st.error_message();
    if (step.field.empty()) continue;
    const auto violations = Violations(st);
    ASSERT_FALSE(violations.empty()) << step.what << ": " << st.error_message();
    EXPECT_EQ(violations[0].field(), step.field) << step.what << ": " << st.error_message();
  }
  ExpectQuotaTableRows(ReservationRows());
  v1::GetTenantRequest get;
  get.set_name("q");
  v1::Tenant q;
  ASSERT_TRUE(tenants_->GetTenant(Ctx(admin_).get(), get, &q).ok());
  EXPECT_FALSE(q.quota().has_gpu_milli());
  EXPECT_EQ(q.quota().vclusters(), 2);
  EXPECT_EQ(q.quota_usage().gpu_milli(), 4000);
  EXPECT_EQ(q.quota_usage().vclusters(), 2);
  // The tenant's owner reads the quota but cannot change it.
  const std::string owner = CreateToken("tenant:q", "owner");
  ASSERT_TRUE(tenants_->GetTenant(Ctx(owner).get(), get, &q).ok());
  EXPECT_EQ(q.quota().vclusters(), 2);
  v1::UpdateTenantRequest raise;
  raise.mutable_tenant()->set_name("q");
  raise.mutable_tenant()->mutable_quota()->set_vclusters(10);
  EXPECT_EQ(tenants_->UpdateTenant(Ctx(owner).get(), raise, &q).error_code(), grpc::StatusCode::PERMISSION_DENIED);
  ASSERT_TRUE(tenants_->GetTenant(Ctx(admin_).get(), get, &q).ok());
  EXPECT_EQ(q.quota().vclusters(), 2);
  // GetTenantQuota: the limits and the usage together; another tenant's
  // token finds no such tenant.
  v1::GetTenantQuotaRequest ask;
  ask.set_tenant("q");
  v1::TenantQuotaStatus status;
  ASSERT_TRUE(tenants_->GetTenantQuota(Ctx(owner).get(), ask, &status).ok());
  EXPECT_EQ(status.tenant(), "q");
  EXPECT_EQ(status.limits().vclusters(), 2);
  EXPECT_FALSE(status.limits().has_gpu_milli());
  EXPECT_EQ(status.usage().gpu_milli(), 4000);
  CreateTenant("other");
  const grpc::Status other = tenants_->GetTenantQuota(Ctx(CreateToken("tenant:other", "owner")).get(), ask, &status);
  EXPECT_EQ(other.error_code(), grpc::StatusCode::NOT_FOUND) << other.error_message();
}

// The virtual cluster lifecycle over gRPC, with every tier's kind of capacity.
TEST_F(GrpcTest, VirtualClusterLifecycle) {
  PutNodes({MigNode("h100-0", 2), WholeGpuNode("a100-0", 4), WholeGpuNode("a100-1", 4), WholeGpuNode("a100-2", 4)});
  struct Kind {
    std::string tier;
    std::function<void(v1::Capacity&)> set;
    std::function<int(const v1::Reservation&)> held;
    int count;
  };
  const std::vector<Kind> kinds = {
      {"exclusive",
       [](v1::Capacity& c) {
         c.mutable_nodes()->set_model("A100-80GB");
         c.mutable_nodes()->set_count(1);
       },
       [](const v1::Reservation& r) { return r.nodes_size(); }, 1},
      {"dedicated",
       [](v1::Capacity& c) {
         c.mutable_gpus()->set_model("A100-80GB");
         c.mutable_gpus()->set_count(2);
       },
       [](const v1::Reservation& r) { return r.gpus_size(); }, 2},
      {"isolated",
       [](v1::Capacity& c) {
         auto* mig = c.add_mig();
         mig->set_profile("1g.10gb");
         mig->set_count(2);
       },
       [](const v1::Reservation& r) { return r.mig_size(); }, 2},
      {"shared", [](v1::Capacity& c) { c.mutable_shared()->set_milli_gpu(250); },
       [](const v1::Reservation& r) { return r.shares_size(); }, 1},
  };
  for (const Kind& kind : kinds) {
    const std::string tenant = "g-" + kind.tier;
    CreateTenant(tenant, kind.tier);
    v1::CreateVirtualClusterRequest create;
    create.set_tenant(tenant);
    create.mutable_virtual_cluster()->set_name("main");
    kind.set(*create.mutable_virtual_cluster()->mutable_capacity());
    v1::VirtualCluster created;
    auto st = vclusters_->CreateVirtualCluster(Ctx(admin_).get(), create, &created);
    ASSERT_TRUE(st.ok()) << kind.tier << ": " << st.error_message();
    EXPECT_EQ(created.state(), v1::VirtualCluster::PROVISIONING);
    EXPECT_EQ(kind.held(created.reservation()), kind.count) << kind.tier;
    v1::GetVirtualClusterRequest get;
    get.set_tenant(tenant);
    get.set_name("main");
    v1::VirtualCluster got;
    ASSERT_TRUE(vclusters_->GetVirtualCluster(Ctx(admin_).get(), get, &got).ok());
    EXPECT_EQ(got.SerializeAsString(), created.SerializeAsString());
  }

  // Two capacity kinds at once: INVALID_ARGUMENT naming capacity.
  v1::CreateVirtualClusterRequest both;
  both.set_tenant("g-dedicated");
  both.mutable_virtual_cluster()->set_name("both");
  both.mutable_virtual_cluster()->mutable_capacity()->mutable_gpus()->set_count(1);
  both.mutable_virtual_cluster()->mutable_capacity()->mutable_nodes()->set_count(1);
  v1::VirtualCluster out;
  auto refused = vclusters_->CreateVirtualCluster(Ctx(admin_).get(), both, &out);
  ASSERT_EQ(refused.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  ASSERT_FALSE(Violations(refused).empty());
  EXPECT_EQ(Violations(refused)[0].field(), "capacity");

  // A second one, then pages of one and the state filter.
  v1::CreateVirtualClusterRequest second;
  second.set_tenant("g-dedicated");
  second.mutable_virtual_cluster()->set_name("second");
  second.mutable_virtual_cluster()->mutable_capacity()->mutable_gpus()->set_model("A100-80GB");
  second.mutable_virtual_cluster()->mutable_capacity()->mutable_gpus()->set_count(1);
  ASSERT_TRUE(vclusters_->CreateVirtualCluster(Ctx(admin_).get(), second, &out).ok());
  v1::ListVirtualClustersRequest list;
  list.set_tenant("g-dedicated");
  list.set_page_size(1);
  v1::ListVirtualClustersResponse page;
  ASSERT_TRUE(vclusters_->ListVirtualClusters(Ctx(admin_).get(), list, &page).ok());
  ASSERT_EQ(page.virtual_clusters_size(), 1);
  ASSERT_FALSE(page.next_page_token().empty());
  const std::string first_name = page.virtual_clusters(0).name();
  list.set_page_token(page.next_page_token());
  ASSERT_TRUE(vclusters_->ListVirtualClusters(Ctx(admin_).get(), list, &page).ok());
  ASSERT_EQ(page.virtual_clusters_size(), 1);
  EXPECT_NE(page.virtual_clusters(0).name(), first_name);
  EXPECT_TRUE(page.next_page_token().empty());
  list.clear_page_token();
  list.set_page_size(0);
  list.set_filter("state=READY");
  ASSERT_TRUE(vclusters_->ListVirtualClusters(Ctx(admin_).get(), list, &page).ok());
  EXPECT_EQ(page.virtual_clusters_size(), 0);

  // Resize with the etag: a stale one is refused, the current one grows the reservation.
  v1::GetVirtualClusterRequest get;
  get.set_tenant("g-dedicated");
  get.set_name("main");
  v1::VirtualCluster current;
  ASSERT_TRUE(vclusters_->GetVirtualCluster(Ctx(admin_).get(), get, &current).ok());
  v1::UpdateVirtualClusterRequest update;
  update.mutable_virtual_cluster()->set_tenant("g-dedicated");
  update.mutable_virtual_cluster()->set_name("main");
  update.mutable_virtual_cluster()->mutable_capacity()->mutable_gpus()->set_model("A100-80GB");
  update.mutable_virtual_cluster()->mutable_capacity()->mutable_gpus()->set_count(3);
  update.mutable_virtual_cluster()->set_etag("999");
  update.mutable_update_mask()->add_paths("capacity");
  EXPECT_EQ(vclusters_->UpdateVirtualCluster(Ctx(admin_).get(), update, &out).error_code(),
            grpc::StatusCode::FAILED_PRECONDITION);
  update.mutable_virtual_cluster()->set_etag(current.etag());
  auto resized = vclusters_->UpdateVirtualCluster(Ctx(admin_).get(), update, &out);
  ASSERT_TRUE(resized.ok()) << resized.error_message();
  EXPECT_EQ(out.reservation().gpus_size(), 3);
  EXPECT_EQ(out.generation(), 2);

  // Delete returns it DELETING; never provisioned, it is gone at once.
  v1::DeleteVirtualClusterRequest del;
  del.set_tenant("g-dedicated");
  del.set_name("main");
  del.set_etag(out.etag());
  ASSERT_TRUE(vclusters_->DeleteVirtualCluster(Ctx(admin_).get(), del, &out).ok());
  EXPECT_EQ(out.state(), v1::VirtualCluster::DELETING);
  EXPECT_EQ(vclusters_->GetVirtualCluster(Ctx(admin_).get(), get, &current).error_code(), grpc::StatusCode::NOT_FOUND);
}

TEST_F(GrpcTest, TokensAndTiers) {
  v1::ListTrustTiersResponse tiers;
  ASSERT_TRUE(tiers_->ListTrustTiers(Ctx(admin_).get(), {}, &tiers).ok());
  ASSERT_EQ(tiers.trust_tiers_size(), 4);
  v1::GetTrustTierRequest get;
  get.set_name("isolated");
  v1::TrustTier isolated;
  ASSERT_TRUE(tiers_->GetTrustTier(Ctx(admin_).get(), get, &isolated).ok());
  EXPECT_EQ(isolated.gpu_sharing(), v1::TrustTier::MIG);
  EXPECT_EQ(isolated.credential_ttl_max().seconds(), 8 * 3600);

  v1::CreateTokenRequest create;
  create.set_principal("admin");
  create.set_role("viewer");
  create.set_ttl("15m");
  v1::ApiToken issued;
  ASSERT_TRUE(tokens_->CreateToken(Ctx(admin_).get(), create, &issued).ok());
  EXPECT_FALSE(issued.token().empty());
  EXPECT_TRUE(issued.has_expire_time());
  v1::ListTokensResponse listed;
  ASSERT_TRUE(tokens_->ListTokens(Ctx(issued.token()).get(), {}, &listed).ok());
  EXPECT_EQ(listed.tokens_size(), 2);  // bootstrap + this one
  for (const auto& t : listed.tokens()) EXPECT_TRUE(t.token().empty());
  v1::RevokeTokenRequest revoke;
  revoke.set_id(issued.id());
  google::protobuf::Empty empty;
  EXPECT_EQ(tokens_->RevokeToken(Ctx(issued.token()).get(), revoke, &empty).error_code(),
            grpc::StatusCode::PERMISSION_DENIED);  // a viewer cannot revoke, not even itself
  ASSERT_TRUE(tokens_->RevokeToken(Ctx(admin_).get(), revoke, &empty).ok());
  EXPECT_EQ(tokens_->ListTokens(Ctx(issued.token()).get(), {}, &listed).error_code(),
            grpc::StatusCode::UNAUTHENTICATED);
}

// Issue 9 #7 over gRPC: the same use case as REST, so the same caps and limit.
class GrpcTokenLimitsTest : public GrpcTest {
  void Configure(config::Config& config) override {
    config.tenant_live_tokens_max = 3;
    config.admin_token_ttl_max = std::chrono::hours(2);
  }
};

TEST_F(GrpcTokenLimitsTest, CapsLifetimesRequiresARoleAndLimitsLiveTokens) {
  CreateTenant("vault", "exclusive");  // credential cap 15 min
  const std::string owner = CreateToken("tenant:vault", "owner");
  struct Case {
    std::string who, principal, role, ttl;
    std::int64_t lifetime;
  };
  for (const auto& c :
       {Case{owner, "tenant:vault", "owner", "", 900}, Case{owner, "tenant:vault", "owner", "87600h", 900},
        Case{admin_, "admin", "viewer", "", 7200}, Case{admin_, "admin", "viewer", "87600h", 7200}}) {
    v1::CreateTokenRequest create;
    create.set_principal(c.principal);
    create.set_role(c.role);
    create.set_ttl(c.ttl);
    v1::ApiToken issued;
    auto st = tokens_->CreateToken(Ctx(c.who).get(), create, &issued);
    ASSERT_TRUE(st.ok()) << c.principal << " " << c.ttl << ": " << st.error_message();
    ASSERT_TRUE(issued.has_expire_time()) << c.principal << " " << c.ttl;
    EXPECT_EQ(issued.expire_time().seconds() - issued.create_time().seconds(), c.lifetime)
        << c.principal << " " << c.ttl;
  }
  v1::CreateTokenRequest another;
  another.set_principal("tenant:vault");
  another.set_role("viewer");
  v1::ApiToken issued;
  auto refused = tokens_->CreateToken(Ctx(owner).get(), another, &issued);
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << refused.error_message();
  EXPECT_NE(refused.error_message().find("limit of 3 live tokens"), std::string::npos) << refused.error_message();

  another.clear_role();
  auto no_role = tokens_->CreateToken(Ctx(owner).get(), another, &issued);
  EXPECT_EQ(no_role.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  ASSERT_EQ(Violations(no_role).size(), 1u);
  EXPECT_EQ(Violations(no_role)[0].field(), "role");
}

TEST_F(GrpcTest, CallsAreCountedOnMetrics) {
  v1::ListTrustTiersResponse tiers;
  ASSERT_TRUE(tiers_->ListTrustTiers(Ctx(admin_).get(), {}, &tiers).ok());
  ASSERT_EQ(tiers_->ListTrustTiers(Ctx("").get(), {}, &tiers).error_code(), grpc::StatusCode::UNAUTHENTICATED);
  auto metrics = Call(admin_, "GET", "/metrics");
  EXPECT_NE(
      metrics.body.find("septa_grpc_requests_total{code=\"OK\",method=\"septa.v1.TrustTierService/ListTrustTiers\"} 1"),
      std::string::npos)
      << metrics.body;
  EXPECT_NE(metrics.body.find("septa_grpc_requests_total{code=\"UNAUTHENTICATED\",method=\"septa.v1.TrustTierService/"
                              "ListTrustTiers\"} 1"),
            std::string::npos);
  EXPECT_NE(metrics.body.find("septa_grpc_request_duration_seconds_bucket"), std::string::npos);
}

TEST_F(GrpcTest, HealthServiceServes) {
  auto health = grpc::health::v1::Health::NewStub(channel_);
  for (const std::string service : {"", "septa.v1.TenantService", "septa.v1.TokenService", "liveness"}) {
    grpc::health::v1::HealthCheckRequest req;
    req.set_service(service);
    grpc::health::v1::HealthCheckResponse resp;
    grpc::ClientContext ctx;
    ASSERT_TRUE(health->Check(&ctx, req, &resp).ok()) << service;
    EXPECT_EQ(resp.status(), grpc::health::v1::HealthCheckResponse::SERVING) << service;
  }
  grpc::health::v1::HealthCheckRequest unknown;
  unknown.set_service("septa.v1.NoSuchService");
  grpc::health::v1::HealthCheckResponse resp;
  grpc::ClientContext ctx;
  EXPECT_EQ(health->Check(&ctx, unknown, &resp).error_code(), grpc::StatusCode::NOT_FOUND);
}

// ---- Issue 9: what a client sends is checked where it enters (validation) ----

// The same checks as REST, through the same use cases: a NUL in an
// idempotency key no longer makes `k\0a` and `k\0b` the same key (issue 9 #5),
// names with a NUL name nothing, and free text refuses controls (#8).
TEST_F(GrpcTest, NulBytesAndControlCharactersAreRefused) {
  v1::CreateTenantRequest create;
  create.mutable_tenant()->set_name("acme");
  create.mutable_tenant()->set_trust_tier("shared");
  v1::Tenant out;
  for (const std::string& key : {std::string("k\0a", 3), std::string("k\0b", 3), std::string("k\x1b[2J")}) {
    create.set_idempotency_key(key);
    auto st = tenants_->CreateTenant(Ctx(admin_).get(), create, &out);
    EXPECT_EQ(st.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << st.error_message();
    ASSERT_EQ(Violations(st).size(), 1u) << st.error_message();
    EXPECT_EQ(Violations(st)[0].field(), "idempotency_key");
  }
  create.set_idempotency_key("");
  create.mutable_tenant()->set_trust_tier(std::string("shared\0x", 8));
  auto st = tenants_->CreateTenant(Ctx(admin_).get(), create, &out);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << st.error_message();
  ASSERT_EQ(Violations(st).size(), 1u) << st.error_message();
  EXPECT_EQ(Violations(st)[0].field(), "trust_tier");
  EXPECT_EQ(Call(admin_, "GET", "/v1/tenants").body.find("acme"), std::string::npos);

  CreateTenant("alpha");
  v1::GetTenantRequest get;
  get.set_name(std::string("alpha\0xyz", 9));
  EXPECT_EQ(tenants_->GetTenant(Ctx(admin_).get(), get, &out).error_code(), grpc::StatusCode::NOT_FOUND);
  v1::GetTrustTierRequest tier;
  tier.set_name(std::string("shared\0x", 8));
  v1::TrustTier tier_out;
  EXPECT_EQ(tiers_->GetTrustTier(Ctx(admin_).get(), tier, &tier_out).error_code(), grpc::StatusCode::NOT_FOUND);
  v1::ListTenantsRequest list;
  list.set_filter(std::string("trust_tier=shared\0x", 19));
  v1::ListTenantsResponse listed;
  st = tenants_->ListTenants(Ctx(admin_).get(), list, &listed);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << st.error_message();
  ASSERT_EQ(Violations(st).size(), 1u);
  EXPECT_EQ(Violations(st)[0].field(), "filter");

  v1::CreateTokenRequest token;
  token.set_principal("tenant:alpha");
  token.set_role("viewer");
  token.set_description("\x1b[2J\x1b[Hpwned\r\n");
  v1::ApiToken issued;
  st = tokens_->CreateToken(Ctx(admin_).get(), token, &issued);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << st.error_message();
  ASSERT_EQ(Violations(st).size(), 1u);
  EXPECT_EQ(Violations(st)[0].field(), "description");
  v1::UpdateTenantRequest update;
  update.mutable_tenant()->set_name("alpha");
  update.mutable_tenant()->set_display_name("evil\u202Egnp.exe");
  st = tenants_->UpdateTenant(Ctx(admin_).get(), update, &out);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << st.error_message();
  ASSERT_EQ(Violations(st).size(), 1u);
  EXPECT_EQ(Violations(st)[0].field(), "display_name");
}

// A string field that is not UTF-8 makes the whole request unreadable to
// protobuf (proto3 strings must be UTF-8): that is the client's mistake,
// INVALID_ARGUMENT, not INTERNAL (issue 9 #4).
TEST_F(GrpcTest, InvalidUtf8IsTheClientsMistake) {
  v1::GetTenantRequest get;
  get.set_name("\xff");
  v1::Tenant out;
  auto st = tenants_->GetTenant(Ctx(admin_).get(), get, &out);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << st.error_message();
  v1::CreateTenantRequest create;
  create.mutable_tenant()->set_name("acme");
  create.mutable_tenant()->set_trust_tier("shared");
  create.set_idempotency_key("k\xff");
  st = tenants_->CreateTenant(Ctx(admin_).get(), create, &out);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << st.error_message();
  EXPECT_EQ(Call(admin_, "GET", "/v1/tenants/acme").status, 404);
}

// Update masks take protobuf's lowerCamelCase names too (issue 9 #14).
TEST_F(GrpcTest, UpdateMaskAcceptsLowerCamelCase) {
  CreateTenant("alpha");
  v1::UpdateTenantRequest update;
  update.mutable_tenant()->set_name("alpha");
  update.mutable_tenant()->set_display_name("Alpha");
  update.mutable_update_mask()->add_paths("displayName");
  v1::Tenant out;
  auto st = tenants_->UpdateTenant(Ctx(admin_).get(), update, &out);
  ASSERT_TRUE(st.ok()) << st.error_message();
  EXPECT_EQ(out.display_name(), "Alpha");
}

}  // namespace
}  // namespace septa::test
