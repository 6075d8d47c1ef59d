#include "services/grpc/grpc_server.h"

#include <grpcpp/ext/proto_server_reflection_plugin.h>
#include <grpcpp/grpcpp.h>
#include <grpcpp/support/server_interceptor.h>
#include <prometheus/counter.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>
#include <algorithm>
#include <atomic>

#include "grpc/health/v1/health.grpc.pb.h"
#include "septa/v1/inventory.grpc.pb.h"
#include "septa/v1/tenant.grpc.pb.h"
#include "septa/v1/token.grpc.pb.h"
#include "septa/v1/trust_tier.grpc.pb.h"
#include "septa/v1/vcluster.grpc.pb.h"
#include "services/apiv1/convert.h"
#include "services/apiv1/latency_buckets.h"
#include "services/core/deadline.h"
#include "services/grpc/grpc_status.h"

namespace septa::grpcapi {

namespace {

std::string Metadata(const grpc::ServerContext* ctx, const std::string& key) {
  auto it = ctx->client_metadata().find(key);
  if (it == ctx->client_metadata().end()) return "";
  return std::string(it->second.data(), it->second.size());
}

// protobuf refuses to read a request whose string fields are not UTF-8, and
// gRPC answers that with INTERNAL before any handler runs. A request that
// cannot be read is the client's mistake: INVALID_ARGUMENT.
class UnreadableRequestInterceptor final : public grpc::experimental::Interceptor {
 public:
  void Intercept(grpc::experimental::InterceptorBatchMethods* methods) override {
    using Hook = grpc::experimental::InterceptionHookPoints;
    // The received message is null exactly when it could not be parsed.
    if (methods->QueryInterceptionHookPoint(Hook::POST_RECV_MESSAGE) && methods->GetRecvMessage() == nullptr) {
      unreadable_ = true;
    }
    if (unreadable_ && methods->QueryInterceptionHookPoint(Hook::PRE_SEND_STATUS) &&
        methods->GetSendStatus().error_code() == grpc::StatusCode::INTERNAL) {
      methods->ModifySendStatus(grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                                             "the request is not a valid protobuf message (are its strings UTF-8?)"));
    }
    methods->Proceed();
  }

 private:
  bool unreadable_ = false;
};

class UnreadableRequestInterceptorFactory final : public grpc::experimental::ServerInterceptorFactoryInterface {
 public:
  grpc::experimental::Interceptor* CreateServerInterceptor(grpc::experimental::ServerRpcInfo*) override {
    return new UnreadableRequestInterceptor();
  }
};

// What every service implementation shares: the use cases and the metrics.
struct Shared {
  UseCases uc;
  prometheus::Family<prometheus::Counter>& requests;
  prometheus::Family<prometheus::Histogram>& latency;
};

// Authenticates the call, runs `body` with the request context, maps its
// status once and counts it. The request id is taken from x-request-id or
// made up, and is echoed in the initial metadata and in the error details.
template <typename Body>
grpc::Status Handle(grpc::ServerContext* ctx, Shared& s, const char* method, Body&& body) {
  const auto start = std::chrono::steady_clock::now();
  core::DeadlineScope deadline(s.uc.db_request_timeout);  // authentication and the use case alike
  const std::string request_id = core::AcceptOrMakeRequestId(Metadata(ctx, "x-request-id"), s.uc.random);
  ctx->AddInitialMetadata("x-request-id", request_id);
  std::string authorization = Metadata(ctx, "authorization");
  constexpr std::string_view kBearer = "Bearer ";
  std::string_view bearer = authorization;
  if (bearer.starts_with(kBearer)) bearer.remove_prefix(kBearer.size());
  auto principal = s.uc.authenticator.Authenticate(bearer);
  const Status status = principal.ok() ? body(core::RequestContext{*principal, request_id}) : principal.status();
  const Code code = status.code();
  s.requests.Add({{"method", method}, {"code", std::string(CodeName(code))}}).Increment();
  s.latency.Add({{"method", method}}, apiv1::RequestLatencyBuckets())
      .Observe(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  return ToGrpcStatus(status, request_id);
}

// Without an update mask, the fields the client set (proto3 has no presence
// for scalars, so a non-empty value counts as set).
std::vector<std::string> ImplicitMask(const v1::Tenant& t) {
  std::vector<std::string> paths;
  if (!t.display_name().empty()) paths.push_back("display_name");
  if (!t.labels().empty()) paths.push_back("labels");
  if (!t.trust_tier().empty()) paths.push_back("trust_tier");
  if (t.state() != v1::Tenant::STATE_UNSPECIFIED) paths.push_back("state");
  if (t.has_quota()) paths.push_back("quota");
  return paths;
}

class TenantServiceImpl final : public v1::TenantService::Service {
 public:
  explicit TenantServiceImpl(Shared& s) : s_(s) {}

  grpc::Status CreateTenant(grpc::ServerContext* ctx, const v1::CreateTenantRequest* req, v1::Tenant* resp) override {
    return Handle(ctx, s_, "septa.v1.TenantService/CreateTenant", [&](const core::RequestContext& rc) -> Status {
      auto draft = apiv1::TenantDraftFromProto(req->tenant());
      SEPTA_RETURN_IF_ERROR(draft);
      auto created = s_.uc.tenants.Create(rc, *draft, req->idempotency_key());
      SEPTA_RETURN_IF_ERROR(created);
      *resp = apiv1::ToProto(*created);
      return Status::Ok();
    });
  }

  grpc::Status GetTenant(grpc::ServerContext* ctx, const v1::GetTenantRequest* req, v1::Tenant* resp) override {
    return Handle(ctx, s_, "septa.v1.TenantService/GetTenant", [&](const core::RequestContext& rc) -> Status {
      auto view = s_.uc.tenants.Get(rc, req->name());
      SEPTA_RETURN_IF_ERROR(view);
      *resp = apiv1::ToProto(view->tenant, view->quota_usage);
      return Status::Ok();
    });
  }

  grpc::Status ListTenants(grpc::ServerContext* ctx, const v1::ListTenantsRequest* req,
                           v1::ListTenantsResponse* resp) override {
    return Handle(ctx, s_, "septa.v1.TenantService/ListTenants", [&](const core::RequestContext& rc) -> Status {
      auto page = s_.uc.tenants.List(rc, {req->page_size(), req->page_token(), req->filter()});
      SEPTA_RETURN_IF_ERROR(page);
      for (const auto& t : page->tenants) *resp->add_tenants() = apiv1::ToProto(t);
      resp->set_next_page_token(page->next_page_token);
      return Status::Ok();
    });
  }

  grpc::Status UpdateTenant(grpc::ServerContext* ctx, const v1::UpdateTenantRequest* req, v1::Tenant* resp) override {
    return Handle(ctx, s_, "septa.v1.TenantService/UpdateTenant", [&](const core::RequestContext& rc) -> Status {
      std::vector<std::string> paths(req->update_mask().paths().begin(), req->update_mask().paths().end());
      if (paths.empty()) paths = ImplicitMask(req->tenant());
      auto update = apiv1::TenantUpdateFromProto(req->tenant(), paths);
      SEPTA_RETURN_IF_ERROR(update);
      auto updated = s_.uc.tenants.Update(rc, req->tenant().name(), *update, req->tenant().etag());
      SEPTA_RETURN_IF_ERROR(updated);
      *resp = apiv1::ToProto(*updated);
      return Status::Ok();
    });
  }

  grpc::Status DeleteTenant(grpc::ServerContext* ctx, const v1::DeleteTenantRequest* req,
                            google::protobuf::Empty*) override {
    return Handle(ctx, s_, "septa.v1.TenantService/DeleteTenant", [&](const core::RequestContext& rc) -> Status {
      return s_.uc.tenants.Delete(rc, req->name(), req->etag());
    });
  }

 private:
  Shared& s_;
};

// Without an update mask, the fields the client set (messages by presence,
// scalars when not empty).
std::vector<std::string> ImplicitMask(const v1::VirtualCluster& v) {
  std::vector<std::string> paths;
  if (!v.display_name().empty()) paths.push_back("display_name");
  if (v.has_capacity()) paths.push_back("capacity");
  if (v.has_quota()) paths.push_back("quota");
  if (v.has_queue()) paths.push_back("queue");
  if (v.has_api_limits()) paths.push_back("api_limits");
  return paths;
}

class VirtualClusterServiceImpl final : public v1::VirtualClusterService::Service {
 public:
  explicit VirtualClusterServiceImpl(Shared& s) : s_(s) {}

  grpc::Status CreateVirtualCluster(grpc::ServerContext* ctx, const v1::CreateVirtualClusterRequest* req,
                                    v1::VirtualCluster* resp) override {
    return Handle(ctx, s_, "septa.v1.VirtualClusterService/CreateVirtualCluster",
                  [&](const core::RequestContext& rc) -> Status {
                    SEPTA_RETURN_IF_ERROR(core::RequireSeeTenant(rc.principal, req->tenant()));
                    SEPTA_RETURN_IF_ERROR(core::RequireWriter(rc.principal, "create virtual clusters"));
                    const v1::VirtualCluster& in = req->virtual_cluster();
                    if (!in.tenant().empty() && in.tenant() != req->tenant()) {
                      return InvalidField("virtual_cluster.tenant", "must match tenant (\"" + req->tenant() + "\")");
                    }
                    auto draft = apiv1::VirtualClusterFromProto(in, /*require_capacity=*/true);
                    SEPTA_RETURN_IF_ERROR(draft);
                    auto created = s_.uc.vclusters.Create(rc, req->tenant(), *draft, req->idempotency_key());
                    SEPTA_RETURN_IF_ERROR(created);
                    *resp = apiv1::ToProto(*created);
                    return Status::Ok();
                  });
  }

  grpc::Status GetVirtualCluster(grpc::ServerContext* ctx, const v1::GetVirtualClusterRequest* req,
                                 v1::VirtualCluster* resp) override {
    return Handle(ctx, s_, "septa.v1.VirtualClusterService/GetVirtualCluster",
                  [&](const core::RequestContext& rc) -> Status {
                    auto found = s_.uc.vclusters.Get(rc, req->tenant(), req->name());
                    SEPTA_RETURN_IF_ERROR(found);
                    *resp = apiv1::ToProto(*found);
                    return Status::Ok();
                  });
  }

  grpc::Status ListVirtualClusters(grpc::ServerContext* ctx, const v1::ListVirtualClustersRequest* req,
                                   v1::ListVirtualClustersResponse* resp) override {
    return Handle(
        ctx, s_, "septa.v1.VirtualClusterService/ListVirtualClusters", [&](const core::RequestContext& rc) -> Status {
          auto page = s_.uc.vclusters.List(rc, req->tenant(), {req->page_size(), req->page_token(), req->filter()});
          SEPTA_RETURN_IF_ERROR(page);
          for (const auto& v : page->vclusters) *resp->add_virtual_clusters() = apiv1::ToProto(v);
          resp->set_next_page_token(page->next_page_token);
          return Status::Ok();
        });
  }

  grpc::Status UpdateVirtualCluster(grpc::ServerContext* ctx, const v1::UpdateVirtualClusterRequest* req,
                                    v1::VirtualCluster* resp) override {
    return Handle(
        ctx, s_, "septa.v1.VirtualClusterService/UpdateVirtualCluster", [&](const core::RequestContext& rc) -> Status {
          const v1::VirtualCluster& in = req->virtual_cluster();
          SEPTA_RETURN_IF_ERROR(core::RequireSeeTenant(rc.principal, in.tenant()));
          SEPTA_RETURN_IF_ERROR(core::RequireWriter(rc.principal, "update virtual clusters"));
          std::vector<std::string> paths(req->update_mask().paths().begin(), req->update_mask().paths().end());
          paths = apiv1::VirtualClusterMaskPaths(paths.empty() ? ImplicitMask(in) : paths);
          auto patch = apiv1::VirtualClusterFromProto(in, std::ranges::find(paths, "capacity") != paths.end());
          SEPTA_RETURN_IF_ERROR(patch);
          auto updated = s_.uc.vclusters.Update(rc, in.tenant(), in.name(), *patch, paths, in.etag());
          SEPTA_RETURN_IF_ERROR(updated);
          *resp = apiv1::ToProto(*updated);
          return Status::Ok();
        });
  }

  grpc::Status DeleteVirtualCluster(grpc::ServerContext* ctx, const v1::DeleteVirtualClusterRequest* req,
                                    v1::VirtualCluster* resp) override {
    return Handle(ctx, s_, "septa.v1.VirtualClusterService/DeleteVirtualCluster",
                  [&](const core::RequestContext& rc) -> Status {
                    auto deleted = s_.uc.vclusters.Delete(rc, req->tenant(), req->name(), req->etag());
                    SEPTA_RETURN_IF_ERROR(deleted);
                    *resp = apiv1::ToProto(*deleted);
                    return Status::Ok();
                  });
  }

  grpc::Status SleepVirtualCluster(grpc::ServerContext* ctx, const v1::SleepVirtualClusterRequest* req,
                                   v1::VirtualCluster* resp) override {
    return Handle(ctx, s_, "septa.v1.VirtualClusterService/SleepVirtualCluster",
                  [&](const core::RequestContext& rc) -> Status {
                    auto asleep = s_.uc.vclusters.Sleep(rc, req->tenant(), req->name(), req->etag());
                    SEPTA_RETURN_IF_ERROR(asleep);
                    *resp = apiv1::ToProto(*asleep);
                    return Status::Ok();
                  });
  }

  grpc::Status WakeVirtualCluster(grpc::ServerContext* ctx, const v1::WakeVirtualClusterRequest* req,
                                  v1::VirtualCluster* resp) override {
    return Handle(ctx, s_, "septa.v1.VirtualClusterService/WakeVirtualCluster",
                  [&](const core::RequestContext& rc) -> Status {
                    auto woken = s_.uc.vclusters.Wake(rc, req->tenant(), req->name(), req->etag());
                    SEPTA_RETURN_IF_ERROR(woken);
                    *resp = apiv1::ToProto(*woken);
                    return Status::Ok();
                  });
  }

  grpc::Status IssueKubeconfig(grpc::ServerContext* ctx, const v1::IssueKubeconfigRequest* req,
                               v1::IssueKubeconfigResponse* resp) override {
    return Handle(
        ctx, s_, "septa.v1.VirtualClusterService/IssueKubeconfig", [&](const core::RequestContext& rc) -> Status {
          auto issued =
              s_.uc.credentials.IssueKubeconfig(rc, req->tenant(), req->vcluster(), {req->ttl(), req->role()});
          SEPTA_RETURN_IF_ERROR(issued);
          *resp = apiv1::ToProto(*issued);
          return Status::Ok();
        });
  }

  grpc::Status ListCredentials(grpc::ServerContext* ctx, const v1::ListCredentialsRequest* req,
                               v1::ListCredentialsResponse* resp) override {
    return Handle(
        ctx, s_, "septa.v1.VirtualClusterService/ListCredentials", [&](const core::RequestContext& rc) -> Status {
          auto page = s_.uc.credentials.List(rc, req->tenant(), req->vcluster(), req->page_size(), req->page_token());
          SEPTA_RETURN_IF_ERROR(page);
          *resp = apiv1::ToProto(*page);
          return Status::Ok();
        });
  }

  grpc::Status RevokeCredential(grpc::ServerContext* ctx, const v1::RevokeCredentialRequest* req,
                                v1::Credential* resp) override {
    return Handle(ctx, s_, "septa.v1.VirtualClusterService/RevokeCredential",
                  [&](const core::RequestContext& rc) -> Status {
                    auto revoked = s_.uc.credentials.Revoke(rc, req->tenant(), req->vcluster(), req->serial());
                    SEPTA_RETURN_IF_ERROR(revoked);
                    *resp = apiv1::ToProto(*revoked);
                    return Status::Ok();
                  });
  }

 private:
  Shared& s_;
};

class TrustTierServiceImpl final : public v1::TrustTierService::Service {
 public:
  explicit TrustTierServiceImpl(Shared& s) : s_(s) {}

  grpc::Status ListTrustTiers(grpc::ServerContext* ctx, const v1::ListTrustTiersRequest*,
                              v1::ListTrustTiersResponse* resp) override {
    return Handle(ctx, s_, "septa.v1.TrustTierService/ListTrustTiers", [&](const core::RequestContext& rc) -> Status {
      auto tiers = s_.uc.tiers.List(rc);
      SEPTA_RETURN_IF_ERROR(tiers);
      for (const auto& t : *tiers) *resp->add_trust_tiers() = apiv1::ToProto(t);
      return Status::Ok();
    });
  }

  grpc::Status GetTrustTier(grpc::ServerContext* ctx, const v1::GetTrustTierRequest* req,
                            v1::TrustTier* resp) override {
    return Handle(ctx, s_, "septa.v1.TrustTierService/GetTrustTier", [&](const core::RequestContext& rc) -> Status {
      auto tier = s_.uc.tiers.Get(rc, req->name());
      SEPTA_RETURN_IF_ERROR(tier);
      *resp = apiv1::ToProto(*tier);
      return Status::Ok();
    });
  }

 private:
  Shared& s_;
};

class TokenServiceImpl final : public v1::TokenService::Service {
 public:
  explicit TokenServiceImpl(Shared& s) : s_(s) {}

  grpc::Status CreateToken(grpc::ServerContext* ctx, const v1::CreateTokenRequest* req, v1::ApiToken* resp) override {
    return Handle(ctx, s_, "septa.v1.TokenService/CreateToken", [&](const core::RequestContext& rc) -> Status {
      auto issued = s_.uc.tokens.Create(rc, apiv1::TokenRequestFromProto(*req));
      SEPTA_RETURN_IF_ERROR(issued);
      *resp = apiv1::ToProto(issued->token);
      resp->set_token(issued->secret_text);
      return Status::Ok();
    });
  }

  grpc::Status ListTokens(grpc::ServerContext* ctx, const v1::ListTokensRequest*,
                          v1::ListTokensResponse* resp) override {
    return Handle(ctx, s_, "septa.v1.TokenService/ListTokens", [&](const core::RequestContext& rc) -> Status {
      auto tokens = s_.uc.tokens.List(rc);
      SEPTA_RETURN_IF_ERROR(tokens);
      for (const auto& t : *tokens) *resp->add_tokens() = apiv1::ToProto(t);
      return Status::Ok();
    });
  }

  grpc::Status RevokeToken(grpc::ServerContext* ctx, const v1::RevokeTokenRequest* req,
                           google::protobuf::Empty*) override {
    return Handle(ctx, s_, "septa.v1.TokenService/RevokeToken",
                  [&](const core::RequestContext& rc) -> Status { return s_.uc.tokens.Revoke(rc, req->id()); });
  }

 private:
  Shared& s_;
};

class InventoryServiceImpl final : public v1::InventoryService::Service {
 public:
  explicit InventoryServiceImpl(Shared& s) : s_(s) {}

  grpc::Status ListNodes(grpc::ServerContext* ctx, const v1::ListNodesRequest* req,
                         v1::ListNodesResponse* resp) override {
    return Handle(ctx, s_, "septa.v1.InventoryService/ListNodes", [&](const core::RequestContext& rc) -> Status {
      auto page = s_.uc.inventory.ListNodes(rc, req->page_size(), req->page_token());
      SEPTA_RETURN_IF_ERROR(page);
      *resp = apiv1::ToProto(*page);
      return Status::Ok();
    });
  }

 private:
  Shared& s_;
};

}  // namespace

// grpc.health.v1 answered from the same probes as REST's /healthz and
// /readyz: the server as a whole ("") and each API service are SERVING when
// septad is ready; "liveness" is SERVING while septad is alive. Watch is left
// UNIMPLEMENTED, which the health protocol allows; probes call Check.
class HealthServiceImpl final : public ::grpc::health::v1::Health::Service {
 public:
  explicit HealthServiceImpl(const core::Probes& probes) : probes_(probes) {}

  grpc::Status Check(grpc::ServerContext*, const ::grpc::health::v1::HealthCheckRequest* req,
                     ::grpc::health::v1::HealthCheckResponse* resp) override {
    Status probe;
    if (req->service() == "liveness") {
      probe = probes_.Live();
    } else if (IsServed(req->service())) {
      probe = stopping_ ? Unavailable("shutting down") : probes_.Ready();
    } else {
      return grpc::Status(grpc::StatusCode::NOT_FOUND, "unknown service");
    }
    resp->set_status(probe.ok() ? ::grpc::health::v1::HealthCheckResponse::SERVING
                                : ::grpc::health::v1::HealthCheckResponse::NOT_SERVING);
    return grpc::Status::OK;
  }

  // From then on the server and its services answer NOT_SERVING.
  void Stop() { stopping_ = true; }

 private:
  static bool IsServed(const std::string& service) {
    return service.empty() || service == v1::TenantService::service_full_name() ||
           service == v1::TrustTierService::service_full_name() || service == v1::TokenService::service_full_name() ||
           service == v1::VirtualClusterService::service_full_name() ||
           service == v1::InventoryService::service_full_name();
  }

  const core::Probes& probes_;
  std::atomic<bool> stopping_{false};
};

struct GrpcServer::Services {
  Services(UseCases uc, prometheus::Registry& metrics)
      : shared{uc,
               prometheus::BuildCounter()
                   .Name("septa_grpc_requests_total")
                   .Help("gRPC calls by method and status code")
                   .Register(metrics),
               prometheus::BuildHistogram()
                   .Name("septa_grpc_request_duration_seconds")
                   .Help("gRPC call latency by method")
                   .Register(metrics)},
        tenants(shared),
        tiers(shared),
        tokens(shared),
        vclusters(shared),
        inventory(shared),
        health(uc.probes) {}
  Shared shared;
  TenantServiceImpl tenants;
  TrustTierServiceImpl tiers;
  TokenServiceImpl tokens;
  VirtualClusterServiceImpl vclusters;
  InventoryServiceImpl inventory;
  HealthServiceImpl health;
};

Result<std::unique_ptr<GrpcServer>> GrpcServer::Start(const std::string& address, UseCases use_cases,
                                                      prometheus::Registry& metrics, const TlsKeyPair* tls) {
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  std::unique_ptr<GrpcServer> server(new GrpcServer());
  server->services_ = std::make_unique<Services>(use_cases, metrics);
  grpc::ServerBuilder builder;
  std::shared_ptr<grpc::ServerCredentials> credentials = grpc::InsecureServerCredentials();
  if (tls != nullptr) {
    grpc::SslServerCredentialsOptions options;
    options.pem_key_cert_pairs.push_back({tls->private_key_pem, tls->certificate_pem});
    credentials = grpc::SslServerCredentials(options);
  }
  builder.AddListeningPort(address, credentials, &server->port_);
  builder.RegisterService(&server->services_->tenants);
  builder.RegisterService(&server->services_->tiers);
  builder.RegisterService(&server->services_->tokens);
  builder.RegisterService(&server->services_->vclusters);
  builder.RegisterService(&server->services_->inventory);
  builder.RegisterService(&server->services_->health);
  std::vector<std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>> interceptors;
  interceptors.push_back(std::make_unique<UnreadableRequestInterceptorFactory>());
  builder.experimental().SetInterceptorCreators(std::move(interceptors));
  server->server_ = builder.BuildAndStart();
  if (!server->server_ || server->port_ == 0) {
    return Unavailable("cannot listen for gRPC on " + address + " (address in use or invalid?)");
  }
  return server;
}

void GrpcServer::Shutdown(std::chrono::milliseconds deadline) {
  if (!server_) return;
  services_->health.Stop();
  server_->Shutdown(std::chrono::system_clock::now() + deadline);
  server_->Wait();
  server_.reset();
}

GrpcServer::~GrpcServer() { Shutdown(std::chrono::seconds(5)); }

}  // namespace septa::grpcapi
