// The gRPC side of septactl: one channel to septad and a call helper that
// gives every call the bearer token and a deadline.
#pragma once

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <memory>
#include <string>

#include "septa/v1/declarative.grpc.pb.h"
#include "septa/v1/inventory.grpc.pb.h"
#include "septa/v1/member.grpc.pb.h"
#include "septa/v1/tenant.grpc.pb.h"
#include "septa/v1/token.grpc.pb.h"
#include "septa/v1/trust_tier.grpc.pb.h"
#include "septa/v1/usage.grpc.pb.h"
#include "septa/v1/vcluster.grpc.pb.h"

namespace septa::cli {

class SeptaClient {
 public:
  struct Security {
    bool tls = false;
    std::string root_ca_pem;  // with tls: empty trusts the system's CAs
  };
  // `server` is host:port.
  SeptaClient(const std::string& server, std::string token, std::chrono::milliseconds timeout,
              const Security& security);

  v1::TenantService::Stub& tenants() { return *tenants_; }
  v1::TenantMemberService::Stub& members() { return *members_; }
  v1::TrustTierService::Stub& tiers() { return *tiers_; }
  v1::TokenService::Stub& tokens() { return *tokens_; }
  v1::InventoryService::Stub& inventory() { return *inventory_; }
  v1::VirtualClusterService::Stub& vclusters() { return *vclusters_; }
  v1::DeclarativeService::Stub& declarative() { return *declarative_; }
  v1::UsageService::Stub& usage() { return *usage_; }

  // Calls `method` of `stub`, e.g. Call(client.tenants(), &Stub::GetTenant, request, &tenant).
  template <typename Stub, typename Request, typename Response>
  grpc::Status Call(Stub& stub, grpc::Status (Stub::*method)(grpc::ClientContext*, const Request&, Response*),
                    const Request& request, Response* response) const {
    grpc::ClientContext context;
    Prepare(context);
    return (stub.*method)(&context, request, response);
  }

  // An admin's reason to write fields a locked apply set owns, sent with
  // every call (metadata septa-break-glass); empty: none.
  void SetBreakGlass(std::string reason) { break_glass_ = std::move(reason); }
  // The tenant a call that names none acts in (metadata septa-tenant, for a
  // person who is a member of several); empty: none is sent.
  void SetTenant(std::string tenant) { tenant_ = std::move(tenant); }

 private:
  void Prepare(grpc::ClientContext& context) const;

  std::string token_;
  std::string break_glass_;
  std::string tenant_;
  std::chrono::milliseconds timeout_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::TenantService::Stub> tenants_;
  std::unique_ptr<v1::TenantMemberService::Stub> members_;
  std::unique_ptr<v1::TrustTierService::Stub> tiers_;
  std::unique_ptr<v1::TokenService::Stub> tokens_;
  std::unique_ptr<v1::InventoryService::Stub> inventory_;
  std::unique_ptr<v1::UsageService::Stub> usage_;
  std::unique_ptr<v1::VirtualClusterService::Stub> vclusters_;
  std::unique_ptr<v1::DeclarativeService::Stub> declarative_;
};

}  // namespace septa::cli
