#include "services/apiv1/api.h"

#include <google/protobuf/message.h>

#include <map>

#include "services/apiv1/rpcs.h"

namespace septa::apiv1 {

namespace pb = google::protobuf;

std::unique_ptr<pb::Message> Rpc::NewRequest() const {
  return std::unique_ptr<pb::Message>(
      pb::MessageFactory::generated_factory()->GetPrototype(method->input_type())->New());
}

Result<std::unique_ptr<pb::Message>> Rpc::Invoke(const core::RequestContext& ctx, const pb::Message& request) const {
  try {
    return handler(ctx, request);
  } catch (const std::exception& e) {
    return Internal(name + ": unexpected error: " + e.what());
  }
}

Result<std::shared_ptr<const Api>> Api::Load(const std::vector<const pb::ServiceDescriptor*>& services,
                                             Handlers handlers) {
  std::map<const pb::Descriptor*, Handler> by_request;
  for (auto& [request, handler] : handlers.handlers_) {
    if (!by_request.emplace(request, std::move(handler)).second) {
      return InvalidArgument("two handlers take " + std::string(request->full_name()));
    }
  }
  // Handlers are found by request type: each RPC must have its own.
  std::map<const pb::Descriptor*, std::string> taken_by;  // request type -> the RPC that takes it
  for (const pb::ServiceDescriptor* service : services) {
    for (int m = 0; m < service->method_count(); ++m) {
      const pb::MethodDescriptor& method = *service->method(m);
      const std::string name = std::string(service->full_name()) + "/" + std::string(method.name());
      if (auto [at, fresh] = taken_by.emplace(method.input_type(), name); !fresh) {
        return InvalidArgument(name + ": takes " + std::string(method.input_type()->full_name()) + " as " + at->second +
                               " does: each RPC needs its own request message");
      }
    }
  }
  auto api = std::make_shared<Api>();
  api->services_ = services;
  for (const pb::ServiceDescriptor* service : services) {
    for (int m = 0; m < service->method_count(); ++m) {
      const pb::MethodDescriptor& method = *service->method(m);
      const std::string name = std::string(service->full_name()) + "/" + std::string(method.name());
      auto failed = [&](const Status& st) { return InvalidArgument(name + ": " + st.message()); };
      if (method.client_streaming() || method.server_streaming()) {
        return failed(InvalidArgument("streaming RPCs are not served"));
      }
      auto http = LoadHttpBinding(method);
      if (!http.ok()) return failed(http.status());
      auto auth = LoadAuthRule(method);
      if (!auth.ok()) return failed(auth.status());
      auto handler = by_request.find(method.input_type());
      if (handler == by_request.end()) return failed(InvalidArgument("has no handler (services/apiv1/*_rpcs.cc)"));
      api->rpcs_.push_back(Rpc{&method, name, *std::move(http), *std::move(auth), std::move(handler->second)});
      by_request.erase(handler);
    }
  }
  if (!by_request.empty()) {
    return InvalidArgument("a handler takes " + std::string(by_request.begin()->first->full_name()) +
                           ", which no RPC of the API takes");
  }
  return std::shared_ptr<const Api>(std::move(api));
}

Result<std::shared_ptr<const Api>> LoadApiV1(const core::UseCases& uc) {
  auto services = ApiServices();
  SEPTA_RETURN_IF_ERROR(services);
  Handlers handlers;
  AddTenantRpcs(handlers, uc);
  AddMemberRpcs(handlers, uc);
  AddCallerRpcs(handlers, uc);
  AddTrustTierRpcs(handlers, uc);
  AddTokenRpcs(handlers, uc);
  AddVirtualClusterRpcs(handlers, uc);
  AddCredentialRpcs(handlers, uc);
  AddInventoryRpcs(handlers, uc);
  AddDeclarativeRpcs(handlers, uc);
  AddUsageRpcs(handlers, uc);
  return Api::Load(*services, std::move(handlers));
}

Status Authorize(const Rpc& rpc, const core::Principal& principal, const pb::Message& request) {
  SEPTA_RETURN_IF_ERROR(CheckTenant(rpc.auth, principal, request));
  return CheckCaller(rpc.auth, principal);
}

std::string RequestTenant(const Rpc& rpc, const pb::Message& request, std::string_view selector) {
  if (rpc.auth.tenant_field) {
    std::string named = GetString(request, *rpc.auth.tenant_field);
    if (!named.empty()) return named;
  }
  return std::string(selector);
}

}  // namespace septa::apiv1
