// API v1 as both transports serve it: every RPC of the service files
// (septa/api_files.h) with its REST binding (`septa.v1.http`), who may call
// it (`septa.v1.auth`) and its handler, the one piece of per-RPC code:
// `Result<Response>(const RequestContext&, const Request&)`, mapping the
// request onto a use case (services/apiv1/*_rpcs.cc). services/rest and
// services/grpc derive routes, bindings and services from this table and
// hold nothing per RPC.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <google/protobuf/descriptor.h>
#include <google/protobuf/message.h>

#include "common/status.h"
#include "services/apiv1/auth_rule.h"
#include "services/apiv1/http_bindings.h"
#include "services/core/auth.h"
#include "services/core/use_cases.h"

namespace septa::apiv1 {

// A handler with its types erased: the request is of the RPC's input type,
// the response of its output type.
using Handler = std::function<Result<std::unique_ptr<google::protobuf::Message>>(const core::RequestContext&,
                                                                                 const google::protobuf::Message&)>;

// The handlers of an API, each registered by its request type (an RPC's
// input type names its RPC: each RPC has its own request message, AIP-133).
class Handlers {
 public:
  // `fn(const core::RequestContext&, const Request&)` returns
  // Result<Response> for the response message type of the RPC.
  template <typename Request, typename Fn>
  void Add(Fn fn) {
    Add(Request::descriptor(),
        [fn = std::move(fn)](const core::RequestContext& ctx, const google::protobuf::Message& request)
            -> Result<std::unique_ptr<google::protobuf::Message>> {
          const auto* typed = google::protobuf::DynamicCastToGenerated<Request>(&request);
          if (typed == nullptr) return Internal("a request of another type reached a handler");
          auto response = fn(ctx, *typed);
          SEPTA_RETURN_IF_ERROR(response);
          using Response = std::remove_cvref_t<decltype(*response)>;
          return std::unique_ptr<google::protobuf::Message>(std::make_unique<Response>(*std::move(response)));
        });
  }

 private:
  friend class Api;
  void Add(const google::protobuf::Descriptor* request, Handler handler) {
    handlers_.emplace_back(request, std::move(handler));
  }
  std::vector<std::pair<const google::protobuf::Descriptor*, Handler>> handlers_;
};

// One RPC, everything a transport needs to serve it.
struct Rpc {
  const google::protobuf::MethodDescriptor* method = nullptr;
  std::string name;  // "septa.v1.TenantService/CreateTenant": gRPC's path without its '/', metrics' label
  HttpBinding http;
  AuthRule auth;
  Handler handler;

  // An empty request message of the RPC's input type.
  std::unique_ptr<google::protobuf::Message> NewRequest() const;
  // Runs the handler; an exception it throws is INTERNAL, not a crash.
  Result<std::unique_ptr<google::protobuf::Message>> Invoke(const core::RequestContext& ctx,
                                                            const google::protobuf::Message& request) const;
};

class Api {
 public:
  // Every RPC of `services` with its binding, its rule and exactly one of
  // `handlers`. Fails naming the RPC whose options are wrong or that has no
  // handler, and the request type of a handler no RPC takes.
  static Result<std::shared_ptr<const Api>> Load(
      const std::vector<const google::protobuf::ServiceDescriptor*>& services, Handlers handlers);

  const std::vector<Rpc>& rpcs() const { return rpcs_; }
  const std::vector<const google::protobuf::ServiceDescriptor*>& services() const { return services_; }

 private:
  std::vector<const google::protobuf::ServiceDescriptor*> services_;
  std::vector<Rpc> rpcs_;
};

// Septa's API v1 over `use_cases` (which must outlive it).
Result<std::shared_ptr<const Api>> LoadApiV1(const core::UseCases& use_cases);

// The RPC's rule for a whole request: the tenant it names (when the rule
// names one), then the caller. gRPC checks it once the request is read;
// REST checks the same two as early as the path allows, before the body.
Status Authorize(const Rpc& rpc, const core::Principal& principal, const google::protobuf::Message& request);

// The tenant a request acts in, as a person's principal is chosen for it
// (core/people.h): the RPC's tenant field when the request sets it,
// otherwise `selector` (the Septa-Tenant header, septa-tenant metadata).
std::string RequestTenant(const Rpc& rpc, const google::protobuf::Message& request, std::string_view selector);

}  // namespace septa::apiv1
