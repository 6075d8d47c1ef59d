#include "services/grpc/grpc_server.h"

#include <grpcpp/ext/proto_server_reflection_plugin.h>
#include <grpcpp/grpcpp.h>
#include <grpcpp/impl/rpc_service_method.h>
#include <grpcpp/support/method_handler.h>
#include <grpcpp/support/proto_buffer_reader.h>
#include <prometheus/counter.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include <algorithm>
#include <atomic>
#include <deque>

#include "grpc/health/v1/health.grpc.pb.h"
#include "services/apiv1/api.h"
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

// What every call shares: the use cases and the metrics.
struct Shared {
  UseCases uc;
  prometheus::Family<prometheus::Counter>& requests;
  prometheus::Family<prometheus::Histogram>& latency;
};

// Reads the request, authenticates the call, checks the RPC's rule, runs
// it, maps its status once and counts it. The request id is taken from
// x-request-id or made up, and is echoed in the initial metadata and in the
// error details.
grpc::Status Handle(const apiv1::Rpc& rpc, Shared& s, grpc::ServerContext* ctx, const grpc::ByteBuffer& wire,
                    grpc::ByteBuffer& reply) {
  const auto start = std::chrono::steady_clock::now();
  core::DeadlineScope deadline(s.uc.db_request_timeout);  // authentication and the use case alike
  const std::string request_id = core::AcceptOrMakeRequestId(Metadata(ctx, "x-request-id"), s.uc.random);
  ctx->AddInitialMetadata("x-request-id", request_id);
  const Status status = [&]() -> Status {
    std::unique_ptr<google::protobuf::Message> request = rpc.NewRequest();
    grpc::ByteBuffer copy(wire);  // the reader consumes what it reads
    grpc::ProtoBufferReader reader(&copy);
    // protobuf refuses a message whose strings are not UTF-8: the
    // client's mistake, before anything else.
    if (!request->ParseFromZeroCopyStream(&reader)) {
      return InvalidArgument("the request is not a valid protobuf message (are its strings UTF-8?)");
    }
    core::Caller caller;  // nobody, for an anonymous RPC (whose request carries its own credential)
    if (rpc.auth.caller != apiv1::Caller::kAnonymous) {
      const std::string authorization = Metadata(ctx, "authorization");
      const std::string selector = Metadata(ctx, core::kTenantSelectorMetadata);
      SEPTA_RETURN_IF_ERROR(core::CheckTenantSelector(core::kTenantSelectorMetadata, selector));
      SEPTA_ASSIGN_OR_RETURN(caller,
                             core::AuthenticateBearer(s.uc.authenticator, s.uc.people, core::BearerToken(authorization),
                                                      apiv1::RequestTenant(rpc, *request, selector), request_id));
    }
    SEPTA_RETURN_IF_ERROR(apiv1::Authorize(rpc, caller.principal, *request));
    core::RequestContext call{.principal = caller.principal,
                              .request_id = request_id,
                              .surface = Metadata(ctx, "user-agent").starts_with("septactl/") ? core::Surface::kSeptactl
                                                                                              : core::Surface::kGrpc,
                              .break_glass = Metadata(ctx, "septa-break-glass"),
                              .person = caller.person};
    SEPTA_RETURN_IF_ERROR(core::CheckBreakGlassReason(call.break_glass, "septa-break-glass"));
    SEPTA_ASSIGN_OR_RETURN(const std::unique_ptr<google::protobuf::Message> response, rpc.Invoke(call, *request));
    std::string bytes = response->SerializeAsString();
    grpc::Slice slice(std::move(bytes));
    reply = grpc::ByteBuffer(&slice, 1);
    return Status::Ok();
  }();
  const Code code = status.code();
  s.requests.Add({{"method", rpc.name}, {"code", std::string(CodeName(code))}}).Increment();
  s.latency.Add({{"method", rpc.name}}, apiv1::RequestLatencyBuckets())
      .Observe(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  return ToGrpcStatus(status, request_id);
}

// One service of the API, built from its descriptor: each RPC a synchronous
// unary method over raw bytes (as the generated code registers its methods,
// so that reflection lists it and the server's thread pool runs it), read
// and written with the RPC's own message types.
class ApiService final : public grpc::Service {
 public:
  ApiService(const google::protobuf::ServiceDescriptor& service, const apiv1::Api& api, Shared& shared) {
    for (const apiv1::Rpc& rpc : api.rpcs()) {
      if (rpc.method->service() != &service) continue;
      const std::string& path = paths_.emplace_back("/" + rpc.name);  // the method keeps a pointer to it
      AddMethod(new grpc::internal::RpcServiceMethod(
          path.c_str(), grpc::internal::RpcMethod::NORMAL_RPC,
          new grpc::internal::RpcMethodHandler<ApiService, grpc::ByteBuffer, grpc::ByteBuffer>(
              [&rpc, &shared](ApiService*, grpc::ServerContext* ctx, const grpc::ByteBuffer* request,
                              grpc::ByteBuffer* response) { return Handle(rpc, shared, ctx, *request, *response); },
              this)));
    }
  }

 private:
  std::deque<std::string> paths_;  // stable addresses
};

}  // namespace

// grpc.health.v1 answered from the same probes as REST's /healthz and
// /readyz: the server as a whole ("") and each API service are SERVING when
// septad is ready; "liveness" is SERVING while septad is alive. Watch is left
// UNIMPLEMENTED, which the health protocol allows; probes call Check.
class HealthServiceImpl final : public ::grpc::health::v1::Health::Service {
 public:
  HealthServiceImpl(const core::Probes& probes, const apiv1::Api& api) : probes_(probes) {
    for (const google::protobuf::ServiceDescriptor* service : api.services())
      served_.emplace_back(service->full_name());
  }

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
  bool IsServed(const std::string& service) const {
    return service.empty() || std::ranges::find(served_, service) != served_.end();
  }

  const core::Probes& probes_;
  std::vector<std::string> served_;  // the API's services' full names
  std::atomic<bool> stopping_{false};
};

struct GrpcServer::Services {
  Services(std::shared_ptr<const apiv1::Api> api_v1, UseCases uc, prometheus::Registry& metrics)
      : api(std::move(api_v1)),
        shared{uc,
               prometheus::BuildCounter()
                   .Name("septa_grpc_requests_total")
                   .Help("gRPC calls by method and status code")
                   .Register(metrics),
               prometheus::BuildHistogram()
                   .Name("septa_grpc_request_duration_seconds")
                   .Help("gRPC call latency by method")
                   .Register(metrics)},
        health(uc.probes, *api) {
    for (const google::protobuf::ServiceDescriptor* service : api->services()) {
      services.push_back(std::make_unique<ApiService>(*service, *api, shared));
    }
  }
  std::shared_ptr<const apiv1::Api> api;
  Shared shared;
  std::vector<std::unique_ptr<ApiService>> services;
  HealthServiceImpl health;
};

Result<std::unique_ptr<GrpcServer>> GrpcServer::Start(const std::string& address, std::shared_ptr<const apiv1::Api> api,
                                                      UseCases use_cases, prometheus::Registry& metrics,
                                                      const TlsKeyPair* tls) {
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  std::unique_ptr<GrpcServer> server(new GrpcServer());
  server->services_ = std::make_unique<Services>(std::move(api), use_cases, metrics);
  grpc::ServerBuilder builder;
  std::shared_ptr<grpc::ServerCredentials> credentials = grpc::InsecureServerCredentials();
  if (tls != nullptr) {
    grpc::SslServerCredentialsOptions options;
    options.pem_key_cert_pairs.push_back({tls->private_key_pem, tls->certificate_pem});
    credentials = grpc::SslServerCredentials(options);
  }
  builder.AddListeningPort(address, credentials, &server->port_);
  for (const auto& service : server->services_->services) builder.RegisterService(service.get());
  builder.RegisterService(&server->services_->health);
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
